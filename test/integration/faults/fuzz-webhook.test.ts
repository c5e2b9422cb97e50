import { Agent, request } from 'node:https';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { allKinds, findKind } from '../../../src/api/kinds.js';
import { issueCertificates, servingIdentity } from '../../../src/webhook/certificates.js';
import { JsonLimitError, MAX_JSON_DEPTH, scanJson } from '../../../src/http/json-guard.js';
import { DEFAULT_MAX_BODY_BYTES, startWebhookServer, type WebhookServer } from '../../../src/webhook/server.js';
import { VALIDATE_PATH } from '../../../src/webhook/settings.js';
import { fieldPathProblem } from '../../support/field-paths.js';
import { manifestCaseArbitrary, type Json, type ManifestCase } from '../../support/manifest-arbitraries.js';

// Issue 8: 10,000 fuzzed AdmissionReviews (CREATE, and UPDATE with an oldObject) POSTed over HTTPS to the
// real admission webhook server, 16 at a time, then raw garbage. The server needs no cluster (the API
// server only calls it), so it runs here on loopback with a CA of its own. Every review gets HTTP 200 and
// a well-formed AdmissionReview for its uid, allowed exactly when the kind's validator finds no error;
// every denial names the field paths; garbage gets a 4xx, never a 5xx, and the server keeps answering.
const REVIEWS = 10_000;
const CONCURRENCY = 16;
const REQUEST_TIMEOUT_MS = 20_000;
const SEED = Number(process.env['EO_FUZZ_SEED'] ?? Math.floor(Math.random() * 2 ** 31));

const logLines: { level: number; msg: string; code?: number }[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString('utf8').split('\n'))
      if (line.trim() !== '') logLines.push(JSON.parse(line) as { level: number; msg: string });
    done();
  },
});

let server: WebhookServer;
let agent: Agent;

beforeAll(async () => {
  const certs = await issueCertificates(
    { action: 'renew-all', reason: 'fuzz' },
    undefined,
    servingIdentity('endpoint-operator-webhook', 'fuzz', { host: '127.0.0.1' }),
    new Date(),
    { caDays: 2, servingDays: 1 },
  );
  server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    tls: { cert: certs.cert, key: certs.key },
    options: defaultValidationOptions,
    log: pino({ level: 'info' }, sink),
  });
  agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: certs.caBundle });
});

afterAll(async () => {
  agent?.destroy();
  await server?.close();
});

interface Reply {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

function post(
  body: string | Buffer,
  opts: { method?: string; path?: string; contentType?: string; chunked?: boolean } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': opts.contentType ?? 'application/json' };
    if (!opts.chunked) headers['content-length'] = Buffer.byteLength(body);
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: opts.method ?? 'POST',
        path: opts.path ?? VALIDATE_PATH,
        agent,
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type']),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    // The server answers 413 and closes while a chunked body is still being written: that is expected.
    req.on('error', (err) => (opts.chunked ? undefined : reject(err)));
    if (opts.chunked) {
      const piece = Buffer.isBuffer(body) ? body : Buffer.from(body);
      for (let i = 0; i < piece.length; i += 64 * 1024) req.write(piece.subarray(i, i + 64 * 1024));
      req.end();
    } else req.end(body);
  });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function reviewOf(c: ManifestCase, uid: string): { body: string; operation: 'CREATE' | 'UPDATE' } {
  const operation = c.oldObject === undefined ? 'CREATE' : 'UPDATE';
  const meta = isObject(c.object) && isObject(c.object.metadata) ? c.object.metadata : {};
  const plural = allKinds.find((k) => k.group === c.group && k.kind === c.kind)?.plural ?? '';
  const request = {
    uid,
    kind: { group: c.group, version: c.version, kind: c.kind },
    resource: { group: c.group, version: c.version, resource: plural },
    ...(typeof meta.name === 'string' ? { name: meta.name } : {}),
    ...(typeof meta.namespace === 'string' ? { namespace: meta.namespace } : {}),
    operation,
    object: c.object,
    ...(c.oldObject === undefined ? {} : { oldObject: c.oldObject }),
    dryRun: false,
  };
  return { body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request }), operation };
}

function nestsTooDeep(body: string): boolean {
  try {
    scanJson(Buffer.from(body));
    return false;
  } catch (err) {
    if (err instanceof JsonLimitError && err.rule === 'depth') return true;
    throw err;
  }
}

interface Cause {
  type: string;
  field: string;
  message: string;
}
interface ReviewResponse {
  apiVersion?: string;
  kind?: string;
  response?: {
    uid?: string;
    allowed?: boolean;
    warnings?: string[];
    status?: { code?: number; reason?: string; message?: string; details?: { causes?: Cause[] } };
  };
}

/** Why the reply to review `body` is wrong, or undefined. The expectation is the validator run in-process on what was sent. */
function replyProblem(c: ManifestCase, uid: string, body: string, operation: string, reply: Reply): string | undefined {
  if (reply.status !== 200) return `HTTP ${reply.status}: ${reply.text.slice(0, 300)}`;
  const review = JSON.parse(reply.text) as ReviewResponse;
  const r = review.response;
  if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview' || r?.uid !== uid)
    return `not an AdmissionReview for ${uid}: ${reply.text.slice(0, 300)}`;
  // Garbage grafted into garbage can nest the review past the body limit (json-guard.ts) in a field no
  // validator reads (`kind`): that review is refused as a whole, naming the limit (too-deep.ts).
  if (nestsTooDeep(body)) {
    const s = r.status;
    return r.allowed === false &&
      s?.code === 400 &&
      s.reason === 'BadRequest' &&
      s.message?.includes(`limit is ${MAX_JSON_DEPTH} nested`)
      ? undefined
      : `a body nested past ${MAX_JSON_DEPTH} was not refused for its depth: ${JSON.stringify(r).slice(0, 300)}`;
  }
  // JSON has no NaN or Infinity: validate exactly what the server received.
  const sent = (JSON.parse(body) as { request: { object: Json; oldObject?: Json } }).request;
  const old = operation === 'UPDATE' ? sent.oldObject : undefined;
  const found = findKind(`${c.group}/${c.version}`, c.kind);
  if (!found) return `${c.group}/${c.version} ${c.kind} is not served`;
  const expected = found.version.validate(sent.object, old, defaultValidationOptions);
  // admission.ts: an object being deleted only waits for its finalizers; it is not validated again.
  const deleting =
    isObject(old) &&
    isObject(old.metadata) &&
    typeof old.metadata.deletionTimestamp === 'string' &&
    old.metadata.deletionTimestamp !== '';
  const allowed = deleting || expected.errors.length === 0;
  if (r.allowed !== allowed)
    return `allowed=${String(r.allowed)} but the validator found ${expected.errors.length} errors: ${JSON.stringify(expected.errors.slice(0, 3).map((e) => e.field))}`;
  if (allowed)
    return JSON.stringify(r.warnings ?? []) === JSON.stringify(deleting ? [] : expected.warnings)
      ? undefined
      : `warnings ${JSON.stringify(r.warnings)}`;
  const status = r.status;
  const causes = status?.details?.causes ?? [];
  if (status?.code !== 422 || status.reason !== 'Invalid' || typeof status.message !== 'string')
    return `denial without a 422 Invalid status: ${JSON.stringify(status).slice(0, 300)}`;
  const shown = expected.errors.slice(0, 100);
  if (causes.length !== shown.length + (expected.errors.length > 100 ? 1 : 0))
    return `${causes.length} causes for ${expected.errors.length} errors`;
  for (const [i, e] of shown.entries()) {
    const cause = causes[i];
    if (cause?.field !== e.field || cause.type !== e.type)
      return `cause ${i} is ${JSON.stringify(cause)}, expected ${e.field} ${e.type}`;
    const problem = fieldPathProblem(e.field, sent.object, old);
    if (problem !== undefined) return problem;
    if (e.field !== '' && !status.message.includes(`${e.field}: `))
      return `the message does not name ${e.field}: ${status.message.slice(0, 300)}`;
  }
  return undefined;
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let i = next++; i < items.length; i = next++) await work(items[i]!, i);
    }),
  );
}

describe(
  `the admission webhook under ${REVIEWS} fuzzed reviews (seed ${SEED}; EO_FUZZ_SEED=${SEED} reproduces)`,
  { timeout: 180_000 },
  () => {
    it("answers every review with 200 and the validators' verdict, naming the field paths of every denial", async () => {
      const cases = fc.sample(manifestCaseArbitrary, { numRuns: REVIEWS, seed: SEED });
      const failures: string[] = [];
      const decisions = { allowed: 0, denied: 0, create: 0, update: 0 };
      await pool(cases, CONCURRENCY, async (c, i) => {
        const uid = `fuzz-${SEED}-${i}`;
        const { body, operation } = reviewOf(c, uid);
        decisions[operation === 'CREATE' ? 'create' : 'update']++;
        let problem: string | undefined;
        try {
          const reply = await post(body);
          problem = replyProblem(c, uid, body, operation, reply);
          if (reply.status === 200)
            decisions[(JSON.parse(reply.text) as ReviewResponse).response?.allowed ? 'allowed' : 'denied']++;
        } catch (err) {
          problem = `request failed: ${(err as Error).message}`;
        }
        if (problem !== undefined && failures.length < 10)
          failures.push(`#${i} ${c.group}/${c.version} ${c.kind} ${operation}: ${problem}\n  ${body.slice(0, 400)}`);
      });
      expect(failures).toEqual([]);
      expect(decisions.allowed).toBeGreaterThan(REVIEWS * 0.05);
      expect(decisions.denied).toBeGreaterThan(REVIEWS * 0.5);
      expect(decisions.create).toBeGreaterThan(REVIEWS * 0.3);
      expect(decisions.update).toBeGreaterThan(REVIEWS * 0.3);
      expect(logLines.filter((l) => l.level >= 50)).toEqual([]);
    });

    it('refuses raw garbage with a 4xx, never a 5xx, and keeps answering', async () => {
      const review = (request: unknown) =>
        JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
      const pe = { group: 'prediction.endpoint-operator.dev', version: 'v1', kind: 'PredictionEndpoint' };
      const ok = {
        uid: 'u',
        kind: pe,
        operation: 'CREATE',
        object: {
          apiVersion: 'prediction.endpoint-operator.dev/v1',
          kind: 'PredictionEndpoint',
          metadata: { name: 'a' },
          spec: { displayName: 'A' },
        },
      };
      let deep = '"bottom"';
      for (let i = 0; i < 100_000; i++) deep = `[${deep}]`;
      const garbage: { what: string; send: () => Promise<Reply>; status: number }[] = [
        { what: 'not JSON', send: () => post('this is not json'), status: 400 },
        { what: 'an empty body', send: () => post(''), status: 400 },
        { what: 'truncated JSON', send: () => post('{"apiVersion": "admission.k8s.io/v1", "kind": "Adm'), status: 400 },
        { what: 'invalid UTF-8', send: () => post(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), status: 400 },
        ...['[]', '"x"', '42', 'null', '{}', '{"request": {}}'].map((body) => ({
          what: `JSON ${body}`,
          send: () => post(body),
          status: 400,
        })),
        {
          what: 'a v1beta1 review',
          send: () =>
            post(JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: ok })),
          status: 400,
        },
        { what: 'no uid', send: () => post(review({ ...ok, uid: undefined })), status: 400 },
        { what: 'an empty uid', send: () => post(review({ ...ok, uid: '' })), status: 400 },
        { what: 'operation PATCH', send: () => post(review({ ...ok, operation: 'PATCH' })), status: 400 },
        {
          what: 'a kind that is a string',
          send: () => post(review({ ...ok, kind: 'PredictionEndpoint' })),
          status: 400,
        },
        { what: 'request: 5', send: () => post(review(5)), status: 400 },
        {
          what: 'a body over the limit',
          send: () => post(`{"a":"${'x'.repeat(DEFAULT_MAX_BODY_BYTES)}"}`),
          status: 413,
        },
        {
          what: 'a chunked body over the limit',
          send: () => post(`{"a":"${'x'.repeat(DEFAULT_MAX_BODY_BYTES)}"}`, { chunked: true }),
          status: 413,
        },
        { what: 'text/plain', send: () => post(review(ok), { contentType: 'text/plain' }), status: 415 },
        { what: 'no content type', send: () => post(review(ok), { contentType: '' }), status: 415 },
        { what: 'GET', send: () => post('', { method: 'GET' }), status: 405 },
        { what: 'another path', send: () => post(review(ok), { path: '/validate/../admin' }), status: 404 },
        {
          what: '100,000 nested arrays as the object',
          send: () => post(review({ ...ok, object: '@' }).replace('"@"', deep)),
          status: 200,
        },
        {
          what: '100,000 nested arrays as the spec',
          send: () => post(review({ ...ok, object: { ...ok.object, spec: '@' } }).replace('"@"', deep)),
          status: 200,
        },
        {
          what: 'a 5 MB displayName',
          send: () => post(review({ ...ok, object: { ...ok.object, spec: { displayName: 'x'.repeat(5_000_000) } } })),
          status: 200,
        },
        {
          what: '50,000 bad labels',
          send: () =>
            post(
              review({
                ...ok,
                object: {
                  ...ok.object,
                  spec: {
                    displayName: 'A',
                    labels: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`Bad-${i}`, 'X'])),
                  },
                },
              }),
            ),
          status: 200,
        },
        {
          what: 'a kind this webhook does not serve',
          send: () => post(review({ ...ok, kind: { group: 'apps', version: 'v1', kind: 'Deployment' } })),
          status: 200,
        },
        { what: 'CREATE without an object', send: () => post(review({ ...ok, object: undefined })), status: 200 },
      ];
      for (const g of garbage) {
        const reply = await g.send();
        expect(reply.status, `${g.what}: ${reply.text.slice(0, 300)}`).toBe(g.status);
        expect(reply.contentType).toMatch(/^application\/json/);
        const body = JSON.parse(reply.text) as ReviewResponse & { kind?: string; code?: number };
        if (g.status === 200) {
          expect(body.response?.uid, g.what).toBe('u');
          expect(body.response?.allowed, g.what).toBe(false);
          // A denial stays small whatever the object: the first 100 causes, values cut short.
          expect(reply.text.length, g.what).toBeLessThan(64 * 1024);
        } else {
          expect(body, g.what).toMatchObject({ kind: 'Status', code: g.status });
        }
      }
      expect(logLines.filter((l) => l.level >= 50)).toEqual([]);

      const after = JSON.parse((await post(review(ok))).text) as ReviewResponse;
      expect(after.response).toEqual({ uid: 'u', allowed: true });
      expect((await post('', { method: 'GET', path: '/healthz' })).status).toBe(200);
    });
  },
);
