/**
 * The caller's end of one call: gone once it closed its connection or stream before the answer was finished,
 * or once its deadline (gRPC's `grpc-timeout`) passed. The prediction pipeline asks `gone`, and the model
 * server exchange in flight stops at once through `whenGone` (upstream.ts).
 *
 * Not an AbortController per call: Node 20 makes each AbortSignal by giving an EventTarget another prototype,
 * and a signal with its listener on every call was a part of the gateway's CPU per prediction that a user pays
 * (measured side by side: docs/benchmarks.md, "What a call's cancellation cost"). A signal is made only for
 * code that asks for one (`signal`: a streamed answer's undici request).
 */
export interface Caller {
  readonly gone: boolean;
  /** Why it went (for gRPC, the status the call ends with); undefined while it is there. */
  readonly reason: unknown;
  /** Calls `listener` once the caller goes (at once if it has); returns what stops listening. */
  whenGone(listener: () => void): () => void;
  /** Aborted when the caller goes, with `reason`. */
  readonly signal: AbortSignal;
}

const stillThere = (): void => undefined;

/** A caller its transport tells of leaving (`leave`): the REST transport on its response's close, gRPC's on its stream's or deadline. */
export class CallerWatch implements Caller {
  private left = false;
  private why: unknown;
  private listeners: (() => void)[] = [];
  private controller: AbortController | undefined;

  get gone(): boolean {
    return this.left;
  }

  get reason(): unknown {
    return this.why;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.left) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /** The caller went, for `reason`; only the first call counts. */
  leave(reason: unknown): void {
    if (this.left) return;
    this.left = true;
    this.why = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }

  whenGone(listener: () => void): () => void {
    if (this.left) {
      listener();
      return stillThere;
    }
    this.listeners.push(listener);
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at >= 0) this.listeners.splice(at, 1);
    };
  }
}

/** The caller behind a signal someone else made (Connect's handler context, for the methods Connect serves). */
export function callerOfSignal(signal: AbortSignal): Caller {
  const caller = new CallerWatch();
  if (signal.aborted) caller.leave(signal.reason);
  else signal.addEventListener('abort', () => caller.leave(signal.reason), { once: true });
  return caller;
}
