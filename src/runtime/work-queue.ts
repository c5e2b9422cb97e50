/**
 * A rate-limited work queue with client-go's semantics (k8s.io/client-go/util/workqueue):
 * - a key added many times before it is processed is processed once (the `dirty` set);
 * - a key being processed is never handed to a second worker; adding it meanwhile marks it
 *   dirty and it is queued again when `done` is called (the `processing` set);
 * - `addRateLimited` delays a key by per-key exponential backoff, `forget` resets it;
 * - `addAfter` delays a key, keeping the earliest requested time when asked twice.
 */
import { realClock, type Clock } from '../base/clock.js';
import {
  workqueueAdds,
  workqueueDepth,
  workqueueQueueDuration,
  workqueueRetries,
  workqueueWorkDuration,
} from '../base/metrics.js';

export interface WorkQueueOptions {
  /** Label of the queue's metrics (`workqueue_depth{name}`); the controller name. */
  readonly name: string;
  readonly clock?: Clock;
  /** First retry delay; default 5 ms (client-go's DefaultControllerRateLimiter). */
  readonly baseDelayMs?: number;
  /** Retry delay cap; default 5 min. */
  readonly maxDelayMs?: number;
}

export class WorkQueue {
  readonly name: string;
  private readonly clock: Clock;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly waitingTimers = new Map<string, { at: number; cancel: () => void }>();
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly getters: Array<(key: string | undefined) => void> = [];
  private readonly idleWaiters: Array<() => void> = [];
  private shuttingDown = false;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 5 * 60_000;
  }

  /** Keys waiting to be processed (not counting delayed or in-flight keys). */
  get length(): number {
    return this.queue.length;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Keys currently handed out and not yet `done`. */
  get inFlight(): number {
    return this.processing.size;
  }

  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.dirty.has(key)) return; // deduplicated: not counted as an add, like client-go
    workqueueAdds.inc({ name: this.name });
    this.dirty.add(key);
    this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Adds `key` after `delayMs`; a second call keeps whichever time is earlier. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = this.clock.now() + delayMs;
    const existing = this.waitingTimers.get(key);
    if (existing && existing.at <= at) return;
    existing?.cancel();
    const cancel = this.clock.setTimer(delayMs, () => {
      this.waitingTimers.delete(key);
      this.add(key);
    });
    this.waitingTimers.set(key, { at, cancel });
  }

  /** Re-adds `key` after its next backoff delay: base·2^failures, capped. */
  addRateLimited(key: string): void {
    workqueueRetries.inc({ name: this.name });
    this.addAfter(key, this.nextDelay(key));
  }

  /** The delay `addRateLimited` would use now, and counts the failure. */
  nextDelay(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2^n overflows to Infinity for large n, which Math.min caps.
    return Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs);
  }

  /** Clears the backoff of `key` (call after a successful reconcile). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key, waiting for one; `undefined` once the queue shuts down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.handOut(key));
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks `key` processed; if it was added meanwhile it is queued again. */
  done(key: string): void {
    const started = this.startedAt.get(key);
    if (started !== undefined) workqueueWorkDuration.observe({ name: this.name }, (this.clock.now() - started) / 1000);
    this.startedAt.delete(key);
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
    if (this.processing.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Stops handing out keys: waiting `get`s resolve `undefined`, delayed adds are dropped. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { cancel } of this.waitingTimers.values()) cancel();
    this.waitingTimers.clear();
    for (const g of this.getters.splice(0)) g(undefined);
    workqueueDepth.set({ name: this.name }, 0);
  }

  /** Shuts down and resolves once every in-flight key is `done` (or `timeoutMs` passes: false). */
  async shutDownWithDrain(timeoutMs = Infinity): Promise<boolean> {
    this.shutDown();
    if (this.processing.size === 0) return true;
    return new Promise((resolve) => {
      let cancel = (): void => undefined;
      const onIdle = (): void => {
        cancel();
        resolve(true);
      };
      this.idleWaiters.push(onIdle);
      if (Number.isFinite(timeoutMs)) {
        cancel = this.clock.setTimer(timeoutMs, () => {
          const i = this.idleWaiters.indexOf(onIdle);
          if (i >= 0) this.idleWaiters.splice(i, 1);
          resolve(false);
        });
      }
    });
  }

  private push(key: string): void {
    const getter = this.getters.shift();
    if (getter) return getter(this.handOut(key));
    this.queue.push(key);
    workqueueDepth.set({ name: this.name }, this.queue.length);
  }

  private handOut(key: string): string {
    this.processing.add(key);
    this.dirty.delete(key);
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    const now = this.clock.now();
    if (added !== undefined) workqueueQueueDuration.observe({ name: this.name }, (now - added) / 1000);
    this.startedAt.set(key, now);
    workqueueDepth.set({ name: this.name }, this.queue.length);
    return key;
  }
}
