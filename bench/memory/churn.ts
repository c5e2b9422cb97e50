/**
 * Steady churn: a bounded-rate loop of the changes a busy cluster sees, keeping the number of
 * objects about constant, so that the operator keeps reconciling, writing status, adding and
 * removing finalizers and emitting events for the whole run. Seeded, so two runs do the same.
 *
 * Actions (weight): traffic split of an endpoint (3), its spec labels (2), an annotation on its
 * metadata that changes no generation (1), a RegistryEndpoint's annotations (2) or port (1),
 * replacing a RegistryEndpoint by a new one (2), replacing a whole endpoint with its two models (1):
 * empty the split, delete the models (their finalizer releases once the split gives them no
 * traffic), delete the endpoint (its finalizer waits for the models), create a new trio.
 */
import { ApiError, type KubeClient } from '../../src/kube/kube-client.js';
import {
  deployedModel,
  predictionEndpoint,
  refOf,
  registryEndpoint,
  SPLITS,
  withRetry,
  type Write,
} from './workload.js';
import { seededRandom as random } from '../seeded-random.js';

export interface ChurnStats {
  started: number;
  completed: number;
  failed: number;
  /** Ticks skipped because MAX_IN_FLIGHT actions were still running (the apiserver fell behind). */
  skipped: number;
  byAction: Record<string, number>;
  lastError?: string;
}

/** A set that can hand out a random member in O(1), and take one out. */
class Pool {
  private readonly items: number[];
  constructor(items: number[]) {
    this.items = items;
  }
  get size(): number {
    return this.items.length;
  }
  pick(rand: () => number): number | undefined {
    return this.items[Math.floor(rand() * this.items.length)];
  }
  take(rand: () => number): number | undefined {
    const i = Math.floor(rand() * this.items.length);
    const last = this.items.pop();
    if (i >= this.items.length) return last;
    const taken = this.items[i];
    if (last !== undefined) this.items[i] = last;
    return taken;
  }
  add(n: number): void {
    this.items.push(n);
  }
}

const MAX_IN_FLIGHT = 8;

export class Churn {
  readonly stats: ChurnStats = { started: 0, completed: 0, failed: 0, skipped: 0, byAction: {} };
  private readonly rand = random(0x5eed);
  private readonly endpoints: Pool;
  private readonly registryEndpoints: Pool;
  private nextEndpoint: number;
  private nextRegistryEndpoint: number;
  private serial = 0;
  private readonly inFlight = new Set<Promise<void>>();
  /** The last action queued per object group, so that two actions on one group never interleave (a split patch racing the emptying of that split would hold its models' finalizers forever). */
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    shape: { endpoints: number; registryEndpoints: number },
  ) {
    this.endpoints = new Pool(Array.from({ length: shape.endpoints }, (_, i) => i));
    this.registryEndpoints = new Pool(Array.from({ length: shape.registryEndpoints }, (_, j) => j));
    this.nextEndpoint = shape.endpoints;
    this.nextRegistryEndpoint = shape.registryEndpoints;
  }

  /** How many objects exist once every deletion finished: three per endpoint, one per RegistryEndpoint. */
  liveObjects(): number {
    return 3 * this.endpoints.size + this.registryEndpoints.size;
  }

  /** Starts `rate` actions per second until `signal` aborts, then waits for those in flight. */
  async run(rate: number, signal: AbortSignal): Promise<void> {
    const interval = 1000 / rate;
    const started = performance.now();
    for (let tick = 0; !signal.aborted; tick++) {
      const wait = started + tick * interval - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (signal.aborted) break;
      if (this.inFlight.size >= MAX_IN_FLIGHT) {
        this.stats.skipped++;
        continue;
      }
      const action = this.pickAction();
      this.stats.started++;
      this.stats.byAction[action.name] = (this.stats.byAction[action.name] ?? 0) + 1;
      const p: Promise<void> = action
        .run()
        .then(
          () => void this.stats.completed++,
          (err: unknown) => {
            this.stats.failed++;
            this.stats.lastError = `${action.name}: ${err instanceof Error ? err.message : String(err)}`;
          },
        )
        .finally(() => this.inFlight.delete(p));
      this.inFlight.add(p);
    }
    await Promise.allSettled([...this.inFlight]);
  }

  private pickAction(): { name: string; run: () => Promise<void> } {
    const actions: Array<[number, string, () => Promise<void>]> = [
      [
        3,
        'split',
        () => this.patchEndpoint({ spec: { trafficSplit: SPLITS[Math.floor(this.rand() * SPLITS.length)] } }),
      ],
      [
        2,
        'labels',
        () => this.patchEndpoint({ spec: { labels: { team: 'growth', env: 'bench', rev: `r${++this.serial}` } } }),
      ],
      [
        1,
        'metadata',
        () => this.patchEndpoint({ metadata: { annotations: { 'example.com/touched': String(++this.serial) } } }),
      ],
      [
        2,
        're-annotations',
        () =>
          this.patchRegistryEndpoint({
            spec: {
              annotations: { 'example.com/shard': String(this.serial % 7), 'example.com/rev': `r${++this.serial}` },
            },
          }),
      ],
      [1, 're-port', () => this.patchRegistryEndpoint({ spec: { port: 8000 + Math.floor(this.rand() * 1000) } })],
      [2, 're-replace', () => this.replaceRegistryEndpoint()],
      [1, 'endpoint-replace', () => this.replaceEndpoint()],
    ];
    let r = this.rand() * actions.reduce((s, [w]) => s + w, 0);
    for (const [weight, name, run] of actions) {
      r -= weight;
      if (r < 0) return { name, run };
    }
    const [, name, run] = actions[0]!;
    return { name, run };
  }

  /** Runs `fn` after every earlier action on `key` settled. */
  private exclusive(key: string, fn: () => Promise<unknown>): Promise<void> {
    const previous = this.busy.get(key) ?? Promise.resolve();
    const next = previous.then(fn, fn);
    this.busy.set(key, next);
    return next.then(
      () => void (this.busy.get(key) === next && this.busy.delete(key)),
      (err: unknown) => {
        if (this.busy.get(key) === next) this.busy.delete(key);
        throw err;
      },
    );
  }

  private async patchEndpoint(patch: unknown): Promise<void> {
    const i = this.endpoints.pick(this.rand);
    if (i === undefined) return;
    await this.exclusive(`ep-${i}`, () => this.merge(predictionEndpoint(i), patch));
  }

  private async patchRegistryEndpoint(patch: unknown): Promise<void> {
    const j = this.registryEndpoints.pick(this.rand);
    if (j === undefined) return;
    await this.exclusive(`re-${j}`, () => this.merge(registryEndpoint(j), patch));
  }

  private async replaceRegistryEndpoint(): Promise<void> {
    const old = this.registryEndpoints.take(this.rand);
    if (old === undefined) return;
    await this.exclusive(`re-${old}`, () => this.remove(registryEndpoint(old)));
    const fresh = this.nextRegistryEndpoint++;
    await this.create(registryEndpoint(fresh));
    this.registryEndpoints.add(fresh);
  }

  private async replaceEndpoint(): Promise<void> {
    const old = this.endpoints.take(this.rand);
    if (old === undefined) return;
    await this.exclusive(`ep-${old}`, async () => {
      await this.merge(predictionEndpoint(old), { spec: { trafficSplit: null } });
      await this.remove(deployedModel(old, '1'));
      await this.remove(deployedModel(old, '2'));
      await this.remove(predictionEndpoint(old));
    });
    const fresh = this.nextEndpoint++;
    await this.create(predictionEndpoint(fresh));
    await this.create(deployedModel(fresh, '1'));
    await this.create(deployedModel(fresh, '2'));
    this.endpoints.add(fresh);
  }

  private merge(target: Write, patch: unknown): Promise<unknown> {
    const name = target.body.metadata.name ?? '';
    return withRetry(`patch ${target.kind} ${name}`, () =>
      this.client.patch(refOf(target.kind), this.namespace, name, patch, { type: 'merge' }),
    );
  }

  private create(w: Write): Promise<unknown> {
    return withRetry(`create ${w.kind} ${w.body.metadata.name ?? ''}`, () =>
      this.client.create(refOf(w.kind), this.namespace, w.body),
    );
  }

  private async remove(w: Write): Promise<void> {
    const name = w.body.metadata.name ?? '';
    try {
      await withRetry(`delete ${w.kind} ${name}`, () => this.client.delete(refOf(w.kind), this.namespace, name));
    } catch (err) {
      if (!(err instanceof Error && err.cause instanceof ApiError && err.cause.reason === 'NotFound')) throw err;
    }
  }
}
