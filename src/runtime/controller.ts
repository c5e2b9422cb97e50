/**
 * A controller: informers feed keys into a work queue, workers call `reconcile(key)`.
 * Like controller-runtime, reconcile gets only a key (level-triggered: it reads the current
 * state from the cache, never trusts the event), returns an explicit action, and an error
 * sends the key to per-key exponential backoff. A reconcile that throws never crashes the
 * process and never runs concurrently with itself for the same key.
 */
import { setMaxListeners } from 'node:events';
import { ApiError, errorKind } from '../kube/api-error.js';
import { realClock, type Clock } from '../base/clock.js';
import type { Informer } from '../kube/informer.js';
import { keyOf, splitKey, type KubeObject } from '../api/common/kube-object.js';
import { objectLogger, silentLogger, type Logger } from '../base/logger.js';
import { activeWorkers, reconcileErrors, reconcilePanics, reconcileTime, reconcileTotal } from '../base/metrics.js';
import { Predicates, type Predicate } from './predicates.js';
import { startReconcileSpan } from './reconcile-span.js';
import { WorkQueue } from './work-queue.js';

/** What to do after a successful reconcile. */
export type ReconcileResult =
  /** Nothing until the next change event. */
  | { readonly action: 'done' }
  /** Again after a fixed delay (polling something that sends no events, a TTL). */
  | { readonly action: 'requeueAfter'; readonly requeueAfterMs: number };

export const Action = {
  done: (): ReconcileResult => ({ action: 'done' }),
  requeueAfter: (ms: number): ReconcileResult => ({ action: 'requeueAfter', requeueAfterMs: ms }),
} as const;

/**
 * A failure that retrying cannot fix (controller-runtime's `TerminalError`): the API server
 * refused the request as forbidden (403) or invalid (422). The key is not retried with backoff;
 * the next change of the object (or of what it watches) reconciles it again.
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** Whether `err` is terminal: a `TerminalError`, or a 403/422 answer of the API server. */
export function isTerminal(err: unknown): boolean {
  return err instanceof TerminalError || (err instanceof ApiError && (err.status === 403 || err.status === 422));
}

export interface ReconcileRequest {
  /** `namespace/name`. */
  readonly key: string;
  readonly namespace: string | undefined;
  readonly name: string;
  /** Carries `{controller, kind, namespace, name}`. */
  readonly log: Logger;
  /**
   * Aborted when leadership is lost, or when a draining shutdown gave up waiting: pass it to
   * every KubeClient call (`{ signal: req.signal }`) so a stopped controller writes nothing more.
   */
  readonly signal: AbortSignal;
}

/** Maps a changed secondary object to the primary keys it affects (e.g. an endpoint → its DeployedModels). */
export type KeyMapper<S> = (obj: S) => readonly string[];

export interface WatchOptions<S extends KubeObject> {
  /** Which updates count (adds and deletes always do); default every update. See `Predicates`. */
  readonly predicate?: Predicate<S>;
  /** Enqueue this long after the change, coalescing a burst into one reconcile; default 0 (at once). */
  readonly delayMs?: number;
}

export interface ControllerOptions<T extends KubeObject> {
  /** Metric/log label, e.g. `deployedmodel`. */
  readonly name: string;
  /** Kind of the primary resource, for logs. */
  readonly kind: string;
  readonly primary: Informer<T>;
  readonly reconcile: (req: ReconcileRequest) => Promise<ReconcileResult>;
  /** Concurrent reconciles (of different keys). Default 2. */
  readonly workers?: number;
  readonly logger?: Logger;
  readonly clock?: Clock;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
}

export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly informers: Informer<KubeObject>[] = [];
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly stop = new AbortController();
  /** The reconciles' signal: aborted with the run signal, or once a drain is over (in-flight work was given its time). */
  private readonly cancel = new AbortController();
  private workers: Promise<void>[] = [];

  constructor(private readonly options: ControllerOptions<T>) {
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.log = (options.logger ?? silentLogger).child({ controller: options.name });
    // As controller-runtime's initMetrics: every result exists from the start, so a rate of errors reads 0, not "no data".
    for (const result of ['success', 'error', 'requeue_after'])
      reconcileTotal.inc({ controller: options.name, result }, 0);
    // Every in-flight request of every worker listens on the reconcile signal: with --workers 16
    // that is 16 listeners by design, not the leak Node's default limit of 10 warns about.
    setMaxListeners(Math.max(1, options.workers ?? 2) + 10, this.cancel.signal);
    this.queue = new WorkQueue({
      name: options.name,
      clock: this.clock,
      ...(options.baseDelayMs !== undefined ? { baseDelayMs: options.baseDelayMs } : {}),
      ...(options.maxDelayMs !== undefined ? { maxDelayMs: options.maxDelayMs } : {}),
    });
    this.informers.push(options.primary as unknown as Informer<KubeObject>);
    const enqueue = (obj: T): void => this.queue.add(keyOf(obj));
    options.primary.addEventHandler({
      onAdd: enqueue,
      // Status-only writes (ours included) do not bump generation, but reconcilers may depend
      // on status or metadata (finalizers, deletionTimestamp), so every change is enqueued;
      // dedup in the queue and "write status only when changed" keep this cheap.
      onUpdate: (_old, obj) => enqueue(obj),
      onDelete: enqueue,
    });
  }

  /**
   * Also reconcile the primaries that `map` names whenever an object of `informer` changes: on
   * add and delete, and on an update that `predicate` lets through (both the old and the new
   * state are mapped, so a reference that moved enqueues both ends). `delayMs` coalesces a burst
   * of changes into one reconcile per key (the earliest pending time wins). This is the one way a
   * controller declares what it depends on; e.g.
   * `models.watches(endpoints, (ep) => modelKeysOf(ep), { predicate: Predicates.generationChanged })`.
   */
  watches<S extends KubeObject>(informer: Informer<S>, map: KeyMapper<S>, options: WatchOptions<S> = {}): this {
    this.informers.push(informer as unknown as Informer<KubeObject>);
    const predicate = options.predicate ?? Predicates.any;
    const delayMs = options.delayMs ?? 0;
    const keysOf = (obj: S): readonly string[] => {
      try {
        return map(obj);
      } catch (err) {
        this.log.error({ err: errorKind(err), object: keyOf(obj) }, 'key mapper threw');
        return [];
      }
    };
    // One event enqueues each key once, even when the old and the new state both name it.
    const enqueue = (...objs: S[]): void => {
      for (const k of new Set(objs.flatMap(keysOf))) this.queue.addAfter(k, delayMs);
    };
    informer.addEventHandler({
      onAdd: (obj) => enqueue(obj),
      onUpdate: (old, obj) => {
        if (predicate(old, obj)) enqueue(old, obj);
      },
      onDelete: (obj) => enqueue(obj),
    });
    return this;
  }

  /** Enqueue a key by hand (e.g. a timer outside any informer). */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** True once every informer this controller reads has synced. */
  hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced());
  }

  /**
   * Waits for the informers (which the caller runs) to sync, then runs the workers until
   * `signal` aborts or `shutdown` is called. Resolves once the workers stopped.
   */
  async run(signal: AbortSignal): Promise<void> {
    const onAbort = (): void => {
      this.stop.abort();
      this.cancel.abort();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    for (const informer of this.informers) {
      if (!(await informer.waitForSync(this.stop.signal))) break;
    }
    if (!this.stop.signal.aborted) {
      this.log.info({ workers: this.options.workers ?? 2 }, 'starting workers');
      const count = Math.max(1, this.options.workers ?? 2);
      this.workers = Array.from({ length: count }, () => this.worker());
    }
    await new Promise<void>((resolve) => {
      if (this.stop.signal.aborted) resolve();
      else this.stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    // In-flight reconciles finish (shutDownWithDrain bounds that wait); queued keys are dropped.
    this.queue.shutDown();
    await Promise.all(this.workers);
    signal.removeEventListener('abort', onAbort);
  }

  /** Stops taking new keys and waits up to `timeoutMs` for in-flight reconciles. Returns whether all finished. */
  async shutdown(timeoutMs: number): Promise<boolean> {
    const drained = this.queue.shutDownWithDrain(timeoutMs);
    this.stop.abort();
    const finished = await drained;
    this.cancel.abort();
    return finished;
  }

  private async worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.processKey(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  /** Runs one reconcile and routes its outcome to the queue; never throws. */
  async processKey(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const log = objectLogger(this.log, {
      kind: this.options.kind,
      ...(namespace !== undefined ? { namespace } : {}),
      name,
    });
    const started = this.clock.now();
    activeWorkers.inc({ controller: this.name });
    const span = startReconcileSpan(this.name, this.options.kind, namespace, name);
    try {
      const result = await this.options.reconcile({ key, namespace, name, log, signal: this.cancel.signal });
      switch (result.action) {
        case 'done':
          this.queue.forget(key);
          reconcileTotal.inc({ controller: this.name, result: 'success' });
          span.end('success');
          break;
        case 'requeueAfter':
          this.queue.forget(key);
          this.queue.addAfter(key, result.requeueAfterMs);
          reconcileTotal.inc({ controller: this.name, result: 'requeue_after' });
          span.end('requeue_after');
          break;
      }
    } catch (err) {
      const kind = errorKind(err instanceof TerminalError ? err.cause : err);
      reconcileTotal.inc({ controller: this.name, result: 'error' });
      reconcileErrors.inc({ controller: this.name, kind });
      span.end('error', kind);
      if (!(err instanceof Error)) reconcilePanics.inc({ controller: this.name });
      if (isTerminal(err)) {
        // Reported where users look by the reconciler; retrying would only repeat the refusal.
        this.queue.forget(key);
        log.error(
          { err: err instanceof Error ? err.message : String(err), errorKind: kind },
          'reconcile failed terminally; not retried until the object changes',
        );
        return;
      }
      const retries = this.queue.numRequeues(key);
      log.error(
        { err: err instanceof Error ? err.message : String(err), errorKind: kind, retries },
        'reconcile failed; backing off',
      );
      this.queue.addRateLimited(key);
    } finally {
      activeWorkers.dec({ controller: this.name });
      reconcileTime.observe({ controller: this.name }, (this.clock.now() - started) / 1000);
    }
  }
}
