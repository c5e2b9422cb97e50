/**
 * A thin typed REST client for the Kubernetes API over node:http(s) with a keep-alive agent.
 * The cluster connection (cluster-connection.ts) supplies server, TLS material and credentials;
 * everything else (paths, verbs, watch streaming, errors, metrics) is ours so the runtime owns the loop.
 */
import http from 'node:http';
import https from 'node:https';
import { HttpProxyAgent, HttpsProxyAgent } from 'hpagent';
import { ApiError } from './api-error.js';
import { loadClusterConnection, type ClusterConnection } from './cluster-connection.js';
import type { Credentials } from './credential-source.js';
import {
  isRecord,
  type KubeObject,
  type ResourceRef,
  type WatchEvent,
  type WatchEventType,
} from '../api/common/kube-object.js';
import { restClientLatency, restClientRequests } from '../base/metrics.js';

export { ApiError } from './api-error.js';
export type { ClusterConnection } from './cluster-connection.js';
export type { KubeObject, ObjectMeta, ResourceRef, WatchEvent } from '../api/common/kube-object.js';

export interface KubeClientOptions {
  /** Per-request timeout (not applied to watches, whose lifetime is bounded by `timeoutSeconds`). Default 30 s. */
  readonly requestTimeoutMs?: number;
  /** Largest response body (and largest single watch event) accepted. Default 64 MiB. */
  readonly maxResponseBytes?: number;
  /** Called with every `Warning` header the server sends (deprecations, admission warnings). */
  readonly onWarning?: (warning: string, method: string, path: string) => void;
  readonly userAgent?: string;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
  continue?: string;
}

/** Every call takes one: aborting it aborts the request (a reconcile passes `req.signal`). */
export interface CallOptions {
  signal?: AbortSignal | undefined;
}

export interface WriteOptions extends CallOptions {
  dryRun?: boolean;
  fieldManager?: string;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export interface PatchOptions extends WriteOptions {
  type: PatchType;
  subresource?: 'status';
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

export interface DeleteOptions extends CallOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  /** Admission runs, nothing is deleted (`dryRun: ["All"]`). */
  dryRun?: boolean;
}

export interface WatchOptions {
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  labelSelector?: string;
  fieldSelector?: string;
}

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  // JSON is YAML, so an apply patch can be sent as JSON under the YAML media type.
  apply: 'application/apply-patch+yaml',
};

const CREDENTIAL_TTL_MS = 10_000;

const WATCH_EVENT_TYPES: ReadonlySet<string> = new Set<WatchEventType>([
  'ADDED',
  'MODIFIED',
  'DELETED',
  'BOOKMARK',
  'ERROR',
]);

type Query = Record<string, string | number | boolean | undefined>;

interface RawResponse {
  status: number;
  body: unknown;
  warnings: string[];
}

export class KubeClient {
  readonly server: string;
  private agent: http.Agent | undefined;
  /** The client certificate the agent was made with, when an exec plugin supplied it. */
  private agentClientCertificate: Credentials['clientCertificate'];
  private credentials: { headers: http.OutgoingHttpHeaders; expiresAt: number } | undefined;
  private credentialsLoading: Promise<void> | undefined;
  /** Set by a 401: the next load asks the credential source to drop what it cached. */
  private credentialsRejected = false;
  private readonly requestTimeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly userAgent: string;

  constructor(
    readonly connection: ClusterConnection,
    private readonly options: KubeClientOptions = {},
  ) {
    this.server = connection.server.replace(/\/+$/, '');
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 64 * 1024 * 1024;
    this.userAgent = options.userAgent ?? 'endpoint-operator/0.1.0';
  }

  /** From `path`, else `$KUBECONFIG` (its files merged), else the in-cluster service account, else `~/.kube/config`. */
  static fromKubeconfig(path?: string, options?: KubeClientOptions): KubeClient {
    return new KubeClient(loadClusterConnection(path !== undefined ? { path } : {}), options);
  }

  /** Releases pooled connections (open watches end with their abort signals). */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }

  async get<T = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    opts: CallOptions = {},
  ): Promise<T | undefined> {
    const res = await this.request('GET', resourcePath(ref, namespace, name), {}, undefined, undefined, opts.signal);
    if (res.status === 404) return undefined;
    return this.expectOk<T>('GET', resourcePath(ref, namespace, name), res);
  }

  async list<T = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    opts: ListOptions & CallOptions = {},
  ): Promise<ListResult<T>> {
    const path = resourcePath(ref, namespace);
    const { signal, ...query } = opts;
    const body = this.expectOk<unknown>(
      'GET',
      path,
      await this.request('GET', path, { ...query }, undefined, undefined, signal),
    );
    if (!isRecord(body) || !Array.isArray(body.items)) throw new Error(`GET ${path}: response is not a list`);
    const meta = isRecord(body.metadata) ? body.metadata : {};
    const result: ListResult<T> = {
      items: body.items as T[],
      resourceVersion: typeof meta.resourceVersion === 'string' ? meta.resourceVersion : '',
    };
    if (typeof meta.continue === 'string' && meta.continue !== '') result.continue = meta.continue;
    return result;
  }

  async create<T = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    body: unknown,
    opts: WriteOptions = {},
  ): Promise<T> {
    const path = resourcePath(ref, namespace);
    return this.expectOk<T>(
      'POST',
      path,
      await this.request('POST', path, writeQuery(opts), body, undefined, opts.signal),
    );
  }

  async replace<T = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    body: unknown,
    opts: WriteOptions & { subresource?: 'status' } = {},
  ): Promise<T> {
    const path = resourcePath(ref, namespace, name, opts.subresource);
    return this.expectOk<T>(
      'PUT',
      path,
      await this.request('PUT', path, writeQuery(opts), body, undefined, opts.signal),
    );
  }

  async patch<T = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    opts: PatchOptions,
  ): Promise<T> {
    const path = resourcePath(ref, namespace, name, opts.subresource);
    if (opts.type === 'apply' && !opts.fieldManager) throw new Error('server-side apply needs a fieldManager');
    const query: Query = { ...writeQuery(opts), force: opts.type === 'apply' && opts.force ? true : undefined };
    return this.expectOk<T>(
      'PATCH',
      path,
      await this.request('PATCH', path, query, patch, PATCH_CONTENT_TYPES[opts.type], opts.signal),
    );
  }

  /** POST to a subresource of an object, e.g. a ServiceAccount's `token` (TokenRequest). */
  async createSubresource<T = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    subresource: string,
    body: unknown,
    opts: CallOptions = {},
  ): Promise<T> {
    const path = resourcePath(ref, namespace, name, subresource);
    return this.expectOk<T>('POST', path, await this.request('POST', path, {}, body, undefined, opts.signal));
  }

  /** `false` when the object was already gone (404); throws on a failed precondition (409) and other errors. */
  async delete(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): Promise<boolean> {
    const path = resourcePath(ref, namespace, name);
    const { signal, dryRun, ...options } = opts;
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', ...options, ...(dryRun ? { dryRun: ['All'] } : {}) };
    const res = await this.request('DELETE', path, {}, body, undefined, signal);
    if (res.status === 404) return false;
    this.expectOk<unknown>('DELETE', path, res);
    return true;
  }

  /**
   * Streams watch events to `onEvent` until the server closes the stream (resolves), the signal
   * aborts (resolves), or the connection fails (rejects). A non-200 answer rejects with ApiError;
   * `ERROR` events (e.g. 410 Expired) are passed to `onEvent` for the caller to act on.
   * `onOpen` is called once the server has answered 200, before the first event.
   */
  async watch<T = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    opts: WatchOptions,
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
    onOpen?: () => void,
  ): Promise<void> {
    const path = resourcePath(ref, namespace);
    const query: Query = { watch: true, ...opts };
    if (signal.aborted) return;
    const req = await this.openRequest('GET', path, query, undefined, undefined, signal);
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        req.destroy();
        resolve();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = (err?: Error): void => {
        signal.removeEventListener('abort', onAbort);
        if (err && !signal.aborted) reject(err);
        else resolve();
      };
      req.on('error', (err) => settle(err));
      req.on('response', (res) => {
        const warnings = this.warningsOf(res, 'GET', path);
        const code = res.statusCode ?? 0;
        restClientRequests.inc({ verb: 'WATCH', code: String(code) });
        if (code !== 200) {
          this.readBody(res).then(
            (body) => settle(ApiError.fromResponse('WATCH', path, code, body, warnings)),
            (err: Error) => settle(err),
          );
          return;
        }
        onOpen?.();
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let nl: number;
          try {
            while ((nl = buffered.indexOf('\n')) >= 0) {
              const line = buffered.slice(0, nl).trim();
              buffered = buffered.slice(nl + 1);
              if (line !== '') onEvent(parseWatchEvent<T>(line, path));
            }
            if (buffered.length > this.maxResponseBytes)
              throw new Error(`WATCH ${path}: an event exceeds ${this.maxResponseBytes} bytes`);
          } catch (err) {
            res.destroy();
            settle(err instanceof Error ? err : new Error(String(err)));
          }
        });
        res.on('end', () => settle());
        res.on('error', (err) => settle(err));
        // `complete` is false when the connection dropped before the chunked stream ended (apiserver restart, reset).
        res.on('close', () =>
          settle(res.complete ? undefined : new Error(`WATCH ${path}: connection closed mid-stream`)),
        );
      });
      req.end();
    });
  }

  private expectOk<T>(method: string, path: string, res: RawResponse): T {
    if (res.status >= 200 && res.status < 300) return res.body as T;
    throw ApiError.fromResponse(method, path, res.status, res.body, res.warnings);
  }

  private async request(
    method: string,
    path: string,
    query: Query,
    body: unknown,
    contentType = 'application/json',
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    const started = performance.now();
    let code = '<error>';
    try {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      signal?.throwIfAborted();
      const req = await this.openRequest(method, path, query, payload, contentType, signal);
      const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
        req.setTimeout(this.requestTimeoutMs, () =>
          req.destroy(new Error(`${method} ${path}: no response within ${this.requestTimeoutMs} ms`)),
        );
        req.on('response', resolve);
        req.on('error', reject);
        req.end(payload);
      });
      code = String(res.statusCode ?? 0);
      // A rotated or revoked token: load credentials afresh (past any cache) for the next request.
      if (res.statusCode === 401) {
        this.credentials = undefined;
        this.credentialsRejected = true;
      }
      const warnings = this.warningsOf(res, method, path);
      return { status: res.statusCode ?? 0, body: await this.readBody(res), warnings };
    } finally {
      restClientRequests.inc({ verb: method, code });
      restClientLatency.observe({ verb: method }, (performance.now() - started) / 1000);
    }
  }

  private async openRequest(
    method: string,
    path: string,
    query: Query,
    payload: Buffer | undefined,
    contentType: string | undefined,
    signal?: AbortSignal,
  ): Promise<http.ClientRequest> {
    const url = new URL(this.server + path + queryString(query));
    const { headers: authHeaders, agent } = await this.session();
    const headers: http.OutgoingHttpHeaders = {
      ...authHeaders,
      Accept: 'application/json',
      'User-Agent': this.userAgent,
    };
    if (payload !== undefined) {
      headers['Content-Type'] = contentType ?? 'application/json';
      headers['Content-Length'] = payload.length;
    }
    const requestOptions: https.RequestOptions = {
      method,
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port,
      path: url.pathname + url.search,
      headers,
      agent,
      signal,
    };
    return url.protocol === 'https:' ? https.request(requestOptions) : http.request(requestOptions);
  }

  /**
   * The keep-alive agent (TLS material set once so pooled sockets are reused) and the auth
   * headers, refreshed every CREDENTIAL_TTL_MS (sooner when they expire): tokens read from files
   * (in-cluster projected tokens) or exec plugins rotate, but re-reading them on every request
   * would cost more than the request itself.
   */
  private async session(): Promise<{ headers: http.OutgoingHttpHeaders; agent: http.Agent }> {
    while (!this.credentials || !this.agent || Date.now() >= this.credentials.expiresAt) {
      this.credentialsLoading ??= this.loadCredentials().finally(() => (this.credentialsLoading = undefined));
      await this.credentialsLoading;
    }
    return { headers: this.credentials.headers, agent: this.agent };
  }

  private async loadCredentials(): Promise<void> {
    const afresh = this.credentialsRejected;
    const loaded = await this.connection.credentials.credentials(afresh);
    if (afresh) this.credentialsRejected = false;
    if (!this.agent || !sameClientCertificate(this.agentClientCertificate, loaded.clientCertificate)) {
      this.retireAgent();
      this.agent = this.newAgent(loaded.clientCertificate);
      this.agentClientCertificate = loaded.clientCertificate;
    }
    const expiresAt = Math.min(Date.now() + CREDENTIAL_TTL_MS, loaded.expiresAt ?? Infinity);
    this.credentials = { headers: { ...loaded.headers }, expiresAt };
  }

  private newAgent(clientCertificate: Credentials['clientCertificate']): http.Agent {
    const proxy = this.connection.proxyUrl;
    if (!this.server.startsWith('https:')) {
      const plain = { keepAlive: true, maxSockets: 64 };
      return proxy === undefined ? new http.Agent(plain) : new HttpProxyAgent({ ...plain, proxy });
    }
    const { ca, cert, key, servername, rejectUnauthorized } = this.connection.tls;
    const tls: https.AgentOptions = { keepAlive: true, maxSockets: 64, rejectUnauthorized };
    if (ca !== undefined) tls.ca = ca;
    if (servername !== undefined) tls.servername = servername;
    const pair = clientCertificate ?? (cert !== undefined && key !== undefined ? { cert, key } : undefined);
    if (pair) {
      tls.cert = pair.cert;
      tls.key = pair.key;
    }
    // hpagent (the proxy agent @kubernetes/client-node uses) opens a CONNECT tunnel and runs the same TLS through it.
    return proxy === undefined ? new https.Agent(tls) : new HttpsProxyAgent({ ...tls, proxy });
  }

  /**
   * An exec plugin handed out a new client certificate: idle sockets of the old agent close
   * now; busy ones (open watches) finish their request and the API server closes them when
   * idle, so no request in flight is cut.
   */
  private retireAgent(): void {
    if (!this.agent) return;
    for (const sockets of Object.values(this.agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
    this.agent = undefined;
  }

  private readBody(res: http.IncomingMessage): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > this.maxResponseBytes) {
          res.destroy();
          reject(new Error(`response exceeds ${this.maxResponseBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (String(res.headers['content-type'] ?? '').includes('json') && text !== '') {
          try {
            resolve(JSON.parse(text));
          } catch {
            resolve(text);
          }
        } else resolve(text);
      });
    });
  }

  private warningsOf(res: http.IncomingMessage, method: string, path: string): string[] {
    const warnings: string[] = [];
    for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
      if (res.rawHeaders[i]?.toLowerCase() === 'warning')
        warnings.push(parseWarningHeader(res.rawHeaders[i + 1] ?? ''));
    }
    if (this.options.onWarning) for (const w of warnings) this.options.onWarning(w, method, path);
    return warnings;
  }
}

function sameClientCertificate(a: Credentials['clientCertificate'], b: Credentials['clientCertificate']): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.cert.equals(b.cert) && a.key.equals(b.key);
}

/** `/api/v1/namespaces/ns/configmaps/name/status` and friends. */
export function resourcePath(
  ref: ResourceRef,
  namespace: string | undefined,
  name?: string,
  subresource?: string,
): string {
  let path = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  if (ref.namespaced && namespace !== undefined && namespace !== '')
    path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${ref.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource !== undefined) path += `/${subresource}`;
  return path;
}

function writeQuery(opts: WriteOptions): Query {
  return { dryRun: opts.dryRun ? 'All' : undefined, fieldManager: opts.fieldManager };
}

function queryString(query: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s === '' ? '' : `?${s}`;
}

/** RFC 7234 §5.5 `warn-code warn-agent "warn-text"`; the apiserver always sends code 299 and agent `-`. */
export function parseWarningHeader(value: string): string {
  const m = /^\d{3}\s+\S+\s+"((?:[^"\\]|\\.)*)"/.exec(value);
  return m?.[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : value;
}

function parseWatchEvent<T>(line: string, path: string): WatchEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new Error(`WATCH ${path}: malformed event line: ${line.slice(0, 200)}`);
  }
  if (
    !isRecord(parsed) ||
    typeof parsed.type !== 'string' ||
    !WATCH_EVENT_TYPES.has(parsed.type) ||
    !isRecord(parsed.object)
  ) {
    throw new Error(`WATCH ${path}: unexpected event: ${line.slice(0, 200)}`);
  }
  return { type: parsed.type as WatchEventType, object: parsed.object as T };
}
