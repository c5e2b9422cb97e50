/**
 * Calls to model servers over undici keep-alive pools (one pool per origin, reused across requests).
 * Per call: round-robin over the model's ready targets, skipping ejected ones (outlier-detection.ts);
 * one deadline covers the whole call, retry included; a caller that goes away (caller.ts) stops the
 * exchange at once.
 *
 * Retry: a call that failed before any byte of it was written (no connection could be made, or the
 * connection failed before undici began writing) is retried once on another target. A call that was
 * written and then lost its connection before an answer is NOT retried: Vertex's prediction calls are
 * not idempotent by contract (RFC 9110 §9.2.2: a client must not repeat a non-idempotent request
 * automatically unless it knows it was not processed), and a model server killed mid-call may have
 * acted on it. It is answered 503 UNAVAILABLE (the `reset` kind) and counted. Either failure ejects
 * the target at once (outlier-detection.ts), so the next calls go elsewhere before the EndpointSlice
 * says the pod is gone.
 */
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import type { Caller } from './caller.js';
import { OutlierDetector } from './outlier-detection.js';
import type { Target } from './routing-table.js';
import type { UpstreamTrace } from './tracing.js';
import { withoutCredentials } from './auth/forwarded-headers.js';

export interface UpstreamOptions {
  /** Deadline of one call (connect, send, answer), retry included. */
  readonly timeoutMs: number;
  readonly connectTimeoutMs?: number;
  /** Most connections per origin; default 256. */
  readonly connectionsPerOrigin?: number;
  /** Largest answer read from a model server; default 64 MiB. */
  readonly maxResponseBytes?: number;
  readonly outliers?: OutlierDetector;
}

export interface UpstreamRequest {
  readonly path: string;
  readonly body: Buffer | string;
  readonly headers: Record<string, string>;
  /** The call's span, when traced: each attempt gets a client span and its own traceparent. */
  readonly trace?: UpstreamTrace | undefined;
}

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The answer's bytes as received (a large answer goes to a JSON worker as they are), and their total length. */
  readonly pieces: readonly Buffer[];
  readonly size: number;
  readonly target: Target;
  /** Whether a first attempt failed and this answer came from the retry. */
  readonly retried: boolean;
}

/** An answer streamed as it arrives (streamRawPredict): the body is read by whoever answers the caller. */
export interface UpstreamStream {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Readable;
  readonly target: Target;
  readonly retried: boolean;
}

/** An answer's bytes in one buffer. */
export function answerBytes(res: Pick<UpstreamResponse, 'pieces' | 'size'>): Buffer {
  return res.pieces.length === 1 ? (res.pieces[0] as Buffer) : Buffer.concat(res.pieces, res.size);
}

/** Why a call got no answer; the route maps it to 503 / 504 / 499 naming the deployed model. */
export class UpstreamFailure extends Error {
  constructor(
    /**
     * connect: nothing was written (no connection, or it failed before the request began): retried once.
     * reset: the request was written, the connection failed before an answer began: not retried.
     * broken: the connection failed during the answer.
     */
    readonly kind: 'connect' | 'reset' | 'broken' | 'timeout' | 'cancelled' | 'too-large',
    message: string,
  ) {
    super(message);
  }
}

const CONNECT_ERRORS = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const RESET_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function codeOf(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.cause?.code === 'string') return e.cause.code;
  return '';
}

/** How far an exchange got before it failed, marked on its error. */
interface Progress {
  /** undici began writing the request. */
  written?: boolean;
  /** The answer had begun. */
  answered?: boolean;
}

/** One call to a model server: what stops its exchange in flight, and why it stopped. */
interface CallState {
  readonly client: Caller;
  timedOut: boolean;
  /** Aborts the exchange in flight; set while one is. */
  stop: (() => void) | undefined;
}

export class UpstreamClient {
  readonly outliers: OutlierDetector;
  private readonly agent: Agent;
  private readonly cursors = new Map<string, number>();
  private readonly maxResponseBytes: number;

  constructor(private readonly options: UpstreamOptions) {
    this.outliers = options.outliers ?? new OutlierDetector();
    this.maxResponseBytes = options.maxResponseBytes ?? 64 * 1024 * 1024;
    this.agent = new Agent({
      connections: options.connectionsPerOrigin ?? 256,
      // Idle connections close after 4 s, before the 5 s after which uvicorn (MLServer, KServe) and Node servers
      // close theirs: the side that closes first is then the gateway, so a call is not written onto a connection
      // the server is closing (which, once written, cannot be retried).
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 120_000,
      connect: { timeout: options.connectTimeoutMs ?? 2_000 },
      // The whole-call deadline below is the one that counts; these only stop a stuck socket.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /** Next target of the set named `setKey`, round-robin, ejected ones skipped unless all are. */
  private choose(setKey: string, targets: readonly Target[], avoid?: Target): Target {
    const start = this.cursors.get(setKey) ?? 0;
    this.cursors.set(setKey, (start + 1) % 1_000_000_007);
    let fallback: Target | undefined;
    for (let k = 0; k < targets.length; k++) {
      const t = targets[(start + k) % targets.length] as Target;
      if (t === avoid) continue;
      if (!this.outliers.isEjected(t.origin)) return t;
      fallback ??= t;
    }
    return fallback ?? avoid ?? (targets[start % targets.length] as Target);
  }

  /** When `client` goes away, the call ends at once ('cancelled'). */
  async call(
    setKey: string,
    targets: readonly Target[],
    request: UpstreamRequest,
    client: Caller,
  ): Promise<UpstreamResponse> {
    if (targets.length === 0) throw new UpstreamFailure('connect', 'no targets');
    // The exchange in flight stops at once when the client goes away or the deadline passes.
    const call: CallState = { client, timedOut: false, stop: undefined };
    const stop = (): void => call.stop?.();
    const timer = setTimeout(() => {
      call.timedOut = true;
      stop();
    }, this.options.timeoutMs);
    const unlisten = client.whenGone(stop);
    try {
      const first = this.choose(setKey, targets);
      try {
        return await this.once(first, request, call, false);
      } catch (err) {
        if (!(err instanceof UpstreamFailure) || err.kind !== 'connect') throw err;
        const second = this.choose(setKey, targets, targets.length > 1 ? first : undefined);
        return await this.once(second, request, call, true);
      }
    } finally {
      clearTimeout(timer);
      unlisten();
    }
  }

  /**
   * A call whose answer is passed on as it arrives, with undici's backpressure (a slow caller slows the model
   * server, nothing piles up here). Targets, retry and outliers as `call`; the deadline bounds the wait for the
   * answer to begin and each pause between its chunks, since a stream has no end time to bound.
   */
  async stream(
    setKey: string,
    targets: readonly Target[],
    request: UpstreamRequest,
    client: Caller,
  ): Promise<UpstreamStream> {
    if (targets.length === 0) throw new UpstreamFailure('connect', 'no targets');
    const first = this.choose(setKey, targets);
    try {
      return await this.streamOnce(first, request, client, false);
    } catch (err) {
      if (!(err instanceof UpstreamFailure) || err.kind !== 'connect') throw err;
      const second = this.choose(setKey, targets, targets.length > 1 ? first : undefined);
      return await this.streamOnce(second, request, client, true);
    }
  }

  private async streamOnce(
    target: Target,
    request: UpstreamRequest,
    client: Caller,
    retried: boolean,
  ): Promise<UpstreamStream> {
    const attempt = request.trace?.attempt(target, request.headers, retried);
    try {
      const res = await this.agent.request({
        origin: target.origin,
        path: target.basePath + request.path,
        method: 'POST',
        headers: withoutCredentials(attempt?.headers ?? request.headers),
        body: request.body,
        signal: client.signal,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
      attempt?.end(res.statusCode);
      if (res.statusCode >= 502 && res.statusCode <= 504) this.outliers.failure(target.origin, 'gateway');
      else this.outliers.success(target.origin);
      return { status: res.statusCode, headers: res.headers, body: res.body, target, retried };
    } catch (err) {
      attempt?.end(undefined, codeOf(err) || (err as Error).message);
      if (client.gone) throw new UpstreamFailure('cancelled', 'the client closed the connection');
      const code = codeOf(err);
      if (code === 'UND_ERR_HEADERS_TIMEOUT') {
        this.outliers.failure(target.origin, 'gateway');
        throw new UpstreamFailure('timeout', `no answer from ${target.origin} within ${this.options.timeoutMs} ms`);
      }
      // undici's request() says nothing of what it wrote; it fails a request with a reset only once writing began.
      throw this.lost(target, err, true);
    }
  }

  private async once(
    target: Target,
    request: UpstreamRequest,
    call: CallState,
    retried: boolean,
  ): Promise<UpstreamResponse> {
    const attempt = request.trace?.attempt(target, request.headers, retried);
    try {
      const res = await this.exchange(target, request, attempt?.headers ?? request.headers, call);
      attempt?.end(res.status);
      if (res.status === 502 || res.status === 503 || res.status === 504)
        this.outliers.failure(target.origin, 'gateway');
      else this.outliers.success(target.origin);
      return { ...res, target, retried };
    } catch (err) {
      attempt?.end(undefined, err instanceof UpstreamFailure ? err.kind : codeOf(err) || (err as Error).message);
      if (err instanceof UpstreamFailure) throw err;
      if (call.client.gone) throw new UpstreamFailure('cancelled', 'the client closed the connection');
      if (call.timedOut) {
        this.outliers.failure(target.origin, 'gateway');
        throw new UpstreamFailure('timeout', `no answer from ${target.origin} within ${this.options.timeoutMs} ms`);
      }
      throw this.lost(target, err, (err as Progress).written === true);
    }
  }

  /**
   * An attempt whose connection failed, as the failure the caller sees, counted against the target: a refused or
   * reset connection ejects it at once (its server is gone or going), other errors count towards an ejection.
   */
  private lost(target: Target, err: unknown, written: boolean): UpstreamFailure {
    const code = codeOf(err);
    const message = `${target.origin}: ${(err as Error).message}${code !== '' ? ` (${code})` : ''}`;
    const reset = RESET_ERRORS.has(code);
    this.outliers.failure(target.origin, CONNECT_ERRORS.has(code) ? 'connect' : reset ? 'reset' : 'gateway');
    if (CONNECT_ERRORS.has(code) || (reset && !written)) return new UpstreamFailure('connect', message);
    return new UpstreamFailure(reset && (err as Progress).answered !== true ? 'reset' : 'broken', message);
  }

  /**
   * One HTTP exchange through undici's dispatcher: the answer is collected as the buffers it arrives
   * in, so that a large one can be handed to a JSON worker without being joined here.
   * `requestHeaders`: the request's, or its attempt's with the trace context (tracing.ts).
   */
  private exchange(
    target: Target,
    request: UpstreamRequest,
    requestHeaders: Record<string, string>,
    call: CallState,
  ): Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    pieces: Buffer[];
    size: number;
  }> {
    return new Promise((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined;
      let status = 0;
      let headers: Record<string, string | string[] | undefined> = {};
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      let written = false;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        (err as Progress).written = written;
        call.stop = undefined;
        reject(err);
      };
      const stopped = (): boolean => call.client.gone || call.timedOut;
      if (stopped()) return fail(new Error('aborted'));
      call.stop = () => {
        const err = new Error('aborted');
        controller?.abort(err);
        fail(err);
      };
      this.agent.dispatch(
        {
          origin: target.origin,
          path: target.basePath + request.path,
          method: 'POST',
          headers: withoutCredentials(requestHeaders),
          body: request.body,
        },
        {
          onRequestStart: (c) => {
            // undici calls this just before it writes the request: from here on, the call may have reached the server.
            written = true;
            controller = c;
            if (stopped()) c.abort(new Error('aborted'));
          },
          onResponseStart: (c, statusCode, responseHeaders) => {
            status = statusCode;
            headers = responseHeaders as Record<string, string | string[] | undefined>;
            const length = Number(responseHeaders['content-length'] ?? 0);
            if (length > this.maxResponseBytes) {
              c.abort(
                new UpstreamFailure(
                  'too-large',
                  `the model server answered ${length} bytes, more than the ${this.maxResponseBytes} read`,
                ),
              );
            }
          },
          onResponseData: (c, chunk) => {
            size += chunk.length;
            if (size > this.maxResponseBytes)
              c.abort(
                new UpstreamFailure('too-large', `the model server answered more than ${this.maxResponseBytes} bytes`),
              );
            else chunks.push(chunk);
          },
          onResponseEnd: () => {
            if (settled) return;
            settled = true;
            call.stop = undefined;
            resolve({ status, headers, pieces: chunks, size });
          },
          onResponseError: (_c, err) => {
            // Failed after the answer began: `broken`, whatever the error code.
            if (status !== 0) (err as Progress).answered = true;
            fail(err);
          },
        },
      );
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
