/**
 * List-then-watch of one resource into an in-memory cache, with event handlers
 * (client-go's Reflector + SharedIndexInformer, owned here so every failure path is ours):
 * - paginated initial list, then a watch from the list's resourceVersion with bookmarks;
 * - 410 Gone / `Expired` (the resourceVersion was compacted) → full relist, and objects that
 *   vanished meanwhile are delivered as deletes (no missed deletes);
 * - any other error → reconnect with jittered exponential backoff, resuming from the last
 *   resourceVersion seen;
 * - server-side `timeoutSeconds` randomized in [min, 2·min) so watches of many replicas
 *   do not all rotate at once (client-go's minWatchTimeout = 5 min);
 * - a client-side inactivity timeout restarts a watch that went silent without closing
 *   (a half-open TCP connection through a load balancer never ends on its own).
 */
import { isExpired, ApiError } from './api-error.js';
import { ObjectCache, type IndexFunc } from './cache.js';
import { realClock, sleep, type Clock } from '../base/clock.js';
import { keyOf, type KubeObject, type ResourceRef, type Status, type WatchEvent } from '../api/common/kube-object.js';
import type { KubeClient, ListOptions, ListResult, WatchOptions } from './kube-client.js';
import { silentLogger, type Logger } from '../base/logger.js';
import { informerRelists, informerWatchRestarts } from '../base/metrics.js';

/** The two calls an informer makes; `kubeListerWatcher` binds them to a KubeClient, unit tests script them. */
export interface ListerWatcher<T> {
  list(opts: ListOptions): Promise<ListResult<T>>;
  /** `onOpen` is called once the server has accepted the watch (HTTP 200), before any event. */
  watch(
    opts: WatchOptions,
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
    onOpen?: () => void,
  ): Promise<void>;
}

export interface Selectors {
  labelSelector?: string;
  fieldSelector?: string;
}

export function kubeListerWatcher<T = KubeObject>(
  client: KubeClient,
  ref: ResourceRef,
  namespace: string | undefined,
  selectors: Selectors = {},
): ListerWatcher<T> {
  return {
    list: (opts) => client.list<T>(ref, namespace, { ...selectors, ...opts }),
    watch: (opts, onEvent, signal, onOpen) =>
      client.watch<T>(ref, namespace, { ...selectors, ...opts }, onEvent, signal, onOpen),
  };
}

export interface EventHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /** `obj` is the last state the informer knew. */
  onDelete?(obj: T): void;
}

export interface InformerOptions {
  /** For logs and metrics, e.g. `prediction.endpoint-operator.dev/v1/deployedmodels`. */
  readonly name: string;
  readonly clock?: Clock;
  /** Uniform random in [0,1); injectable for deterministic tests. */
  readonly random?: () => number;
  readonly logger?: Logger;
  /** Items per list page; default 500 (client-go's pager default). */
  readonly pageSize?: number;
  /** Watch `timeoutSeconds` lies in [min, 2·min); default min 300. */
  readonly minWatchTimeoutSeconds?: number;
  /** A watch with no event for this long is restarted; default the longest server timeout + 30 s. */
  readonly inactivityTimeoutMs?: number;
  /** Reconnect backoff: initial and cap (client-go: 800 ms, 30 s), doubled per failure with full jitter on top. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

/**
 * A watch the server accepted (HTTP 200) and that stayed open this long reached a working server. Counted from
 * the acceptance, not from the request: a kube-apiserver that is still starting holds requests for seconds and
 * then refuses them, which is the same outage, not a recovery.
 */
const HEALTHY_WATCH_MS = 1000;

class WatchStalled extends Error {
  override readonly name = 'WatchStalled';
}

export class Informer<T extends KubeObject = KubeObject> {
  readonly name: string;
  private readonly cache = new ObjectCache<T>();
  private readonly handlers: EventHandler<T>[] = [];
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly log: Logger;
  private readonly pageSize: number;
  private readonly minWatchTimeoutSeconds: number;
  private readonly inactivityTimeoutMs: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private synced = false;
  private syncWaiters: Array<() => void> = [];
  private lastResourceVersion = '';
  private failures = 0;
  /** When the server accepted the current watch (undefined until it has). */
  private watchOpenedAt: number | undefined;

  constructor(
    private readonly source: ListerWatcher<T>,
    options: InformerOptions,
  ) {
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.log = (options.logger ?? silentLogger).child({ informer: options.name });
    this.pageSize = options.pageSize ?? 500;
    this.minWatchTimeoutSeconds = options.minWatchTimeoutSeconds ?? 300;
    this.inactivityTimeoutMs = options.inactivityTimeoutMs ?? (2 * this.minWatchTimeoutSeconds + 30) * 1000;
    this.initialBackoffMs = options.initialBackoffMs ?? 800;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
  }

  addEventHandler(handler: EventHandler<T>): void {
    this.handlers.push(handler);
    // A handler added after sync still learns about everything already cached (client-go does the same).
    if (this.synced) for (const obj of this.cache.list()) this.dispatch(() => handler.onAdd?.(obj));
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    this.cache.addIndex(name, fn);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.cache.get(namespace, name);
  }

  getByKey(key: string): T | undefined {
    return this.cache.getByKey(key);
  }

  list(namespace?: string): T[] {
    return this.cache.list(namespace);
  }

  byIndex(indexName: string, value: string): T[] {
    return this.cache.byIndex(indexName, value);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** The resourceVersion the next watch would start from. */
  get resourceVersion(): string {
    return this.lastResourceVersion;
  }

  /** Resolves `true` once the first list is in the cache, `false` if `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(false);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      });
    });
  }

  /** Lists and watches until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    let listReason = 'initial';
    while (!signal.aborted) {
      this.watchOpenedAt = undefined;
      try {
        if (needList) {
          await this.relist(listReason);
          needList = false;
        }
        const events = await this.watchOnce(signal);
        informerWatchRestarts.inc({ resource: this.name, reason: 'closed' });
        // A server-side timeout is routine: rewatch at once from the last resourceVersion. But a
        // stream that closes immediately and empty, again and again, must not become a hot loop.
        if (events === 0 && !this.watchWasHealthy()) await sleep(this.clock, this.nextBackoff(), signal);
        else this.failures = 0;
        continue;
      } catch (err) {
        if (signal.aborted) break;
        // A watch that stayed up a while before failing ends an outage: the next one starts again
        // from the initial backoff instead of the ceiling an earlier, unrelated outage left behind.
        if (this.watchWasHealthy()) this.failures = 0;
        if (err instanceof WatchStalled) {
          informerWatchRestarts.inc({ resource: this.name, reason: 'stalled' });
          this.log.warn({ timeoutMs: this.inactivityTimeoutMs }, 'watch silent too long; restarting it');
          continue;
        }
        if (isExpired(err)) {
          // Compacted away: no backoff (client-go relists at once), a relist is the only way forward.
          this.log.info({ resourceVersion: this.lastResourceVersion }, 'resourceVersion expired; relisting');
          needList = true;
          listReason = 'expired';
          continue;
        }
        informerWatchRestarts.inc({ resource: this.name, reason: 'error' });
        if (needList) listReason = 'error';
        const delay = this.nextBackoff();
        this.log.warn({ err: describe(err), retryInMs: Math.round(delay) }, needList ? 'list failed' : 'watch failed');
        await sleep(this.clock, delay, signal);
      }
    }
  }

  private async relist(reason: string): Promise<void> {
    informerRelists.inc({ resource: this.name, reason });
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      // A continue token can expire mid-list (410); the error propagates and run() relists from scratch.
      const page = await this.source.list(
        cont === undefined ? { limit: this.pageSize } : { limit: this.pageSize, continue: cont },
      );
      items.push(...page.items);
      resourceVersion = page.resourceVersion;
      cont = page.continue;
    } while (cont !== undefined);
    const diff = this.cache.replace(items);
    this.lastResourceVersion = resourceVersion;
    this.failures = 0;
    for (const obj of diff.added) this.emit('add', obj);
    for (const { old, obj } of diff.updated) this.emit('update', obj, old);
    for (const obj of diff.deleted) this.emit('delete', obj);
    this.log.debug(
      {
        count: items.length,
        added: diff.added.length,
        updated: diff.updated.length,
        deleted: diff.deleted.length,
        resourceVersion,
      },
      'listed',
    );
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  /** One watch stream; returns the number of events it delivered. */
  private async watchOnce(signal: AbortSignal): Promise<number> {
    const timeoutSeconds = Math.floor(this.minWatchTimeoutSeconds * (1 + this.random()));
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let stalled = false;
    let failure: unknown;
    let received = 0;
    let cancelStallTimer = (): void => undefined;
    const armStallTimer = (): void => {
      cancelStallTimer();
      cancelStallTimer = this.clock.setTimer(this.inactivityTimeoutMs, () => {
        stalled = true;
        controller.abort();
      });
    };
    armStallTimer();
    try {
      await this.source.watch(
        { resourceVersion: this.lastResourceVersion, allowWatchBookmarks: true, timeoutSeconds },
        (event) => {
          if (failure !== undefined || controller.signal.aborted) return;
          armStallTimer();
          received++;
          try {
            this.apply(event);
          } catch (err) {
            failure = err;
            controller.abort();
          }
        },
        controller.signal,
        () => {
          this.watchOpenedAt = this.clock.now();
        },
      );
    } finally {
      cancelStallTimer();
      signal.removeEventListener('abort', onAbort);
    }
    if (failure !== undefined) throw failure;
    if (stalled && !signal.aborted) throw new WatchStalled(`no watch event for ${this.inactivityTimeoutMs} ms`);
    return received;
  }

  private apply(event: WatchEvent<T>): void {
    const rv = event.object.metadata?.resourceVersion;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const { old, stored } = this.cache.upsert(event.object);
        if (old) this.emit('update', stored, old);
        else this.emit('add', stored);
        break;
      }
      case 'DELETED': {
        const old = this.cache.remove(keyOf(event.object));
        this.emit('delete', old ?? event.object);
        break;
      }
      case 'BOOKMARK':
        break;
      case 'ERROR': {
        const status = event.object as unknown as Status;
        throw new ApiError(
          status.code ?? 500,
          status.reason ?? 'InternalError',
          `watch ${this.name}: ${status.message ?? 'error event'}`,
          status,
        );
      }
    }
    if (rv) this.lastResourceVersion = rv;
    this.failures = 0;
  }

  private emit(kind: 'add' | 'update' | 'delete', obj: T, old?: T): void {
    for (const h of this.handlers) {
      if (kind === 'add') this.dispatch(() => h.onAdd?.(obj));
      else if (kind === 'update') this.dispatch(() => h.onUpdate?.(old ?? obj, obj));
      else this.dispatch(() => h.onDelete?.(obj));
    }
  }

  /** A throwing handler is logged and skipped: it must not stop the informer or other handlers. */
  private dispatch(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err: describe(err) }, 'event handler threw');
    }
  }

  /** The last watch was accepted and stayed open long enough to count as a working connection (resets the backoff). */
  private watchWasHealthy(): boolean {
    return this.watchOpenedAt !== undefined && this.clock.now() - this.watchOpenedAt >= HEALTHY_WATCH_MS;
  }

  /** Full jitter over an exponentially growing ceiling (AWS architecture blog, "Exponential Backoff And Jitter"). */
  private nextBackoff(): number {
    const ceiling = Math.min(this.initialBackoffMs * 2 ** this.failures, this.maxBackoffMs);
    this.failures++;
    return ceiling / 2 + (this.random() * ceiling) / 2;
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
