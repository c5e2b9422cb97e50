/**
 * Which objects the operator has brought to Ready, seen from outside the operator through one
 * list+watch per kind (the operator's own caches are in another process). Only a boolean per
 * object is kept, so this process stays small. An object counts as converged when its Ready
 * condition is True for its current generation and it is not being deleted; the operator writes
 * that only from what its informer cache delivered, so "all converged" also means its caches hold
 * every object.
 */
import type { KubeClient, KubeObject, WatchEvent } from '../../src/kube/kube-client.js';
import { KINDS, refOf, type KindName } from './workload.js';

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly observedGeneration?: number;
}

export function isConverged(obj: KubeObject): boolean {
  if (obj.metadata.deletionTimestamp) return false;
  const conditions = (obj.status as { conditions?: Condition[] } | undefined)?.conditions;
  const ready = conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === obj.metadata.generation;
}

export interface ReadinessCounts {
  readonly total: number;
  readonly converged: number;
  readonly byKind: Record<KindName, { total: number; converged: number }>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class ReadinessTracker {
  private readonly state = new Map<KindName, Map<string, boolean>>(KINDS.map((k) => [k, new Map()]));
  private readonly synced = new Set<KindName>();
  private readonly runs: Promise<void>[] = [];
  private readonly stopping = new AbortController();
  /** Lists after the first one per kind: a watch that expired or failed. */
  relists = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
  ) {}

  start(): void {
    for (const kind of KINDS) this.runs.push(this.loop(kind));
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled(this.runs);
  }

  counts(): ReadinessCounts {
    const byKind = {} as Record<KindName, { total: number; converged: number }>;
    let total = 0;
    let converged = 0;
    for (const [kind, objects] of this.state) {
      let c = 0;
      for (const ok of objects.values()) if (ok) c++;
      byKind[kind] = { total: objects.size, converged: c };
      total += objects.size;
      converged += c;
    }
    return { total, converged, byKind };
  }

  /** Resolves once every kind has listed and exactly `expected` objects exist, all converged; rejects after `timeoutMs`. */
  async waitAllConverged(
    expected: number,
    timeoutMs: number,
    progress?: (c: ReadinessCounts) => void,
  ): Promise<number> {
    const started = performance.now();
    let lastReport = started;
    for (;;) {
      const c = this.counts();
      if (this.synced.size === KINDS.length && c.total === expected && c.converged === expected)
        return performance.now() - started;
      if (performance.now() - started > timeoutMs) {
        throw new Error(`not converged within ${timeoutMs / 1000} s: ${describe(c)} (expected ${expected})`);
      }
      if (progress && performance.now() - lastReport > 15_000) {
        lastReport = performance.now();
        progress(c);
      }
      await sleep(250);
    }
  }

  private async loop(kind: KindName): Promise<void> {
    const ref = refOf(kind);
    const signal = this.stopping.signal;
    let first = true;
    while (!signal.aborted) {
      try {
        const objects = new Map<string, boolean>();
        let resourceVersion = '';
        let cont: string | undefined;
        do {
          const page = await this.client.list(ref, this.namespace, { limit: 500, ...(cont ? { continue: cont } : {}) });
          for (const o of page.items) objects.set(o.metadata.name ?? '', isConverged(o));
          resourceVersion = page.resourceVersion;
          cont = page.continue;
        } while (cont);
        this.state.set(kind, objects);
        this.synced.add(kind);
        if (!first) this.relists++;
        first = false;
        // Resume from the last resourceVersion seen when a watch times out; list again only when it expired (410).
        let expired = false;
        while (!expired && !signal.aborted) {
          await this.client.watch(
            ref,
            this.namespace,
            { resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 300 },
            (e: WatchEvent<KubeObject>) => {
              if (e.type === 'ERROR') {
                expired = true;
                return;
              }
              resourceVersion = e.object.metadata.resourceVersion ?? resourceVersion;
              if (e.type === 'DELETED') objects.delete(e.object.metadata.name ?? '');
              else if (e.type !== 'BOOKMARK') objects.set(e.object.metadata.name ?? '', isConverged(e.object));
            },
            signal,
          );
        }
      } catch (err) {
        if (signal.aborted) return;
        console.error(
          `readiness watch of ${kind} failed, listing again: ${err instanceof Error ? err.message : String(err)}`,
        );
        await sleep(1000);
      }
    }
  }
}

export function describe(c: ReadinessCounts): string {
  return `${c.converged}/${c.total} converged (${KINDS.map((k) => `${k} ${c.byKind[k].converged}/${c.byKind[k].total}`).join(', ')})`;
}
