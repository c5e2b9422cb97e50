import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { KindDefinition, ValidationOptions } from '../api/common/kind.js';
import { allKinds } from '../api/kinds.js';
import { annotate, type AccessLine } from '../http/front-door.js';
import { JsonLimitError, parseGuardedJson } from '../http/json-guard.js';
import { requestIdOf } from '../http/request-id.js';
import { reportServerError } from '../http/server-errors.js';
import { WEBHOOK_SERVER_LIMITS, type ServerLimits } from '../http/server-limits.js';
import { createServer, setServerCertificate, type AnyRequest, type AnyResponse } from '../http/server.js';
import { decodeAdmissionReview, MalformedReviewError, reviewResponse } from './admission-review.js';
import { reviewAdmission } from './admission.js';
import { conversionReviewResponse, decodeConversionReview, reviewConversion } from './conversion.js';
import { converters as defaultConverters, type ConverterTable } from './converters.js';
import { reviewFinalizers } from './finalizers.js';
import { TooDeepBody, tooDeepAnswer } from './too-deep.js';
import { CONVERT_PATH, MUTATE_PATH, VALIDATE_PATH } from './settings.js';
import { recordServingCertificate, trackWebhookRequest } from './metrics.js';

export interface ServingCertificate {
  /** PEM serving certificate (chain). */
  readonly cert: string;
  /** PEM private key. */
  readonly key: string;
}

export interface WebhookServerOptions {
  /** 0 picks a free port (reported in the returned handle). */
  readonly port: number;
  readonly host: string;
  readonly tls: ServingCertificate;
  readonly options: ValidationOptions;
  readonly log: Logger;
  readonly kinds?: readonly KindDefinition[];
  readonly converters?: ConverterTable;
  /**
   * Largest accepted request body. An AdmissionReview carries the object and the old object, each
   * at most etcd's 1.5 MiB request limit, so 6 MiB leaves room for JSON overhead.
   */
  readonly maxBodyBytes?: number;
  /** Timeouts and connection cap; default WEBHOOK_SERVER_LIMITS. */
  readonly serverLimits?: Partial<ServerLimits>;
}

export interface WebhookServer {
  readonly port: number;
  /** Serves renewed certificates to new connections without a restart. */
  setTls(tls: ServingCertificate): void;
  close(): Promise<void>;
}

export const DEFAULT_MAX_BODY_BYTES = 6 * 1024 * 1024;

class HttpError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** A metav1.Status body, so an error shows up readably in the API server's "failed calling webhook" message. */
function sendError(res: AnyResponse, err: HttpError): void {
  send(res, err.code, {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code: err.code,
    reason: err.reason,
    message: err.message,
  });
}

function send(res: AnyResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readJson(req: AnyRequest, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(
        new HttpError(
          413,
          'RequestEntityTooLarge',
          `request body of ${declared} bytes exceeds the limit of ${limit} bytes`,
        ),
      );
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        reject(new HttpError(413, 'RequestEntityTooLarge', `request body exceeds the limit of ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', (err) => {
      if (!failed) reject(new HttpError(400, 'BadRequest', `reading request body: ${err.message}`));
    });
    req.on('end', () => {
      if (failed) return;
      const body = Buffer.concat(chunks);
      const text = body.toString('utf8');
      if (text.trim() === '') {
        reject(
          new HttpError(
            400,
            'BadRequest',
            'request body is empty; expected a JSON AdmissionReview or ConversionReview',
          ),
        );
        return;
      }
      try {
        resolve(parseGuardedJson(body));
      } catch (err) {
        if (err instanceof JsonLimitError && err.rule === 'depth') reject(new TooDeepBody(text, err.message));
        else
          reject(
            new HttpError(
              400,
              'BadRequest',
              err instanceof JsonLimitError ? err.message : `request body is not valid JSON: ${(err as Error).message}`,
            ),
          );
      }
    });
  });
}

/**
 * The validating (`POST /validate`), mutating (`POST /mutate`) and conversion (`POST /convert`) webhooks over HTTPS, plus
 * `GET /healthz`, on the server factory's port (src/http/server.ts: limits, timeouts, connection cap, request id,
 * duplicate-Host refusal, access line). Every review is answered and logged on one line (its access line, with the
 * review's uid and decision); no input crashes the server.
 *
 * HTTP/1.1 alone (ALPN `http/1.1`), as controller-runtime's webhook servers are by default: kubebuilder turns HTTP/2
 * off unless `--enable-http2`, for the HTTP/2 rapid-reset and stream-cancellation CVEs. The kube-apiserver's webhook
 * client speaks HTTP/2 only when ALPN offers it, and Node's HTTP/2 answered a review later than its HTTP/1.1 (one
 * review at a time, same process, same run: bench/webhook-old-new.ts). A refusal that must end the connection (413)
 * closes it.
 */
export async function startWebhookServer(opts: WebhookServerOptions): Promise<WebhookServer> {
  const kinds = opts.kinds ?? allKinds;
  const table = opts.converters ?? defaultConverters;
  const limit = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = opts.log;

  async function handle(req: AnyRequest, res: AnyResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    if (path === VALIDATE_PATH || path === MUTATE_PATH || path === CONVERT_PATH) trackWebhookRequest(path, res);
    try {
      if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
        send(res, 200, { status: 'ok' });
        return;
      }
      if (path !== VALIDATE_PATH && path !== MUTATE_PATH && path !== CONVERT_PATH) {
        throw new HttpError(
          404,
          'NotFound',
          `no webhook at ${path}; use POST ${VALIDATE_PATH}, POST ${MUTATE_PATH} or POST ${CONVERT_PATH}`,
        );
      }
      if (req.method !== 'POST')
        throw new HttpError(405, 'MethodNotAllowed', `${req.method ?? '?'} ${path}: only POST is supported`);
      const type = req.headers['content-type'] ?? '';
      if (!type.toLowerCase().startsWith('application/json'))
        throw new HttpError(415, 'UnsupportedMediaType', `content-type must be application/json, got "${type}"`);
      const body = await readJson(req, limit);
      if (path === VALIDATE_PATH) {
        const request = decodeAdmissionReview(body);
        const outcome = reviewAdmission(request, { kinds, options: opts.options });
        annotate(res, {
          msg: 'admission review',
          path,
          uid: request.uid,
          operation: request.operation,
          kind: outcome.kind,
          namespace: outcome.namespace,
          name: outcome.name,
          decision: outcome.decision,
          causes: outcome.causes,
          warnings: outcome.response.warnings?.length ?? 0,
        });
        send(res, 200, reviewResponse(outcome.response));
      } else if (path === MUTATE_PATH) {
        const request = decodeAdmissionReview(body);
        const outcome = reviewFinalizers(request, kinds);
        annotate(res, {
          msg: 'mutating review',
          path,
          uid: request.uid,
          operation: request.operation,
          kind: outcome.kind,
          namespace: outcome.namespace,
          name: outcome.name,
          decision: outcome.decision,
        });
        send(res, 200, reviewResponse(outcome.response));
      } else {
        const request = decodeConversionReview(body);
        const outcome = reviewConversion(request, table);
        const failure = outcome.response.result.status === 'Failure' ? outcome.response.result.message : undefined;
        annotate(res, {
          msg: 'conversion review',
          path,
          uid: request.uid,
          kind: outcome.kind,
          desiredAPIVersion: request.desiredAPIVersion,
          objects: request.objects.length,
          decision: failure === undefined ? 'converted' : 'failed',
          ...(failure === undefined ? {} : { message: failure }),
        });
        send(res, 200, conversionReviewResponse(outcome.response));
      }
    } catch (err) {
      const refusal =
        err instanceof TooDeepBody ? tooDeepAnswer(path === CONVERT_PATH ? 'conversion' : 'admission', err) : undefined;
      if (refusal !== undefined) {
        annotate(res, {
          msg: 'review refused: nested too deeply',
          level: 'warn',
          path,
          decision: 'denied',
          message: (err as Error).message,
        });
        send(res, 200, refusal);
        return;
      }
      const httpError =
        err instanceof HttpError
          ? err
          : err instanceof MalformedReviewError || err instanceof TooDeepBody
            ? new HttpError(400, 'BadRequest', err.message)
            : new HttpError(500, 'InternalError', `internal error: ${(err as Error).message}`);
      if (httpError.code >= 500)
        reportServerError(log, {
          server: 'webhook',
          route: path === VALIDATE_PATH || path === MUTATE_PATH || path === CONVERT_PATH ? path : 'unrouted',
          requestId: requestIdOf(req),
          status: httpError.code,
          err,
        });
      else refused(res, httpError, path, req.method);
      // The rest of an oversized body is not read: the connection cannot carry another request.
      if (httpError.code === 413) res.setHeader('connection', 'close');
      if (!res.headersSent) sendError(res, httpError);
    }
  }

  /** The access line of a refused request (4xx); 5xx are reported once by reportServerError. */
  function refused(res: AnyResponse, err: HttpError, path: string, method: string | undefined): void {
    annotate(res, {
      msg: 'webhook request refused',
      level: 'warn',
      path,
      method,
      code: err.code,
      decision: 'error',
      message: err.message,
    });
  }

  /** One line per annotated request (reviews and refusals; not /healthz, which probes call every few seconds). */
  function accessLog(line: AccessLine, annotations: Readonly<Record<string, unknown>> | undefined): void {
    if (annotations === undefined) return;
    const { msg, level, ...fields } = annotations;
    const entry = { ...fields, requestId: line.requestId, http: line.httpVersion, ms: line.ms };
    if (level === 'warn') log.warn(entry, String(msg));
    else log.info(entry, String(msg));
  }

  const limits: ServerLimits = { ...WEBHOOK_SERVER_LIMITS, ...opts.serverLimits };
  const server = createServer({
    limits,
    tls: opts.tls,
    http2: false,
    // kube-apiserver keeps its connections alive between reviews (60 s here): once closing, every answer says
    // `Connection: close` and idle connections end within this, rather than the close waiting out a review that was in
    // flight and then its connection's keep-alive (an `npm start` stopped in 84-86 s instead of 3.4 s).
    drainMs: 1_000,
    front: {
      refuse: (req, res, refusal) => {
        const err = new HttpError(refusal.status, 'BadRequest', refusal.message);
        refused(res, err, (req.url ?? '/').split('?', 1)[0] ?? '/', req.method);
        sendError(res, err);
      },
      log: accessLog,
    },
    onRequest: (req, res) => {
      void handle(req, res);
    },
    onTlsError: (_client, err) => log.debug({ err: err.message }, 'TLS handshake failed'),
  });
  recordServingCertificate(opts.tls.cert);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  log.info({ host: opts.host, port }, 'webhook server listening');
  return {
    port,
    setTls(tls: ServingCertificate): void {
      setServerCertificate(server, tls);
      recordServingCertificate(tls.cert);
    },
    close(): Promise<void> {
      // The factory's close also ends the kept-alive connections the apiserver would otherwise hold open (drain.ts).
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
