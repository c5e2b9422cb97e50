import type { Informer } from '../../runtime/informer.js';
import type { KubeClient } from '../../runtime/kube-client.js';
import type { KubeObject, ResourceRef } from '../../runtime/kube-object.js';
import { setCondition, type Condition } from '../../runtime/conditions.js';
import { StatusWriter } from '../../runtime/status.js';
import type { Logger } from '../../runtime/logger.js';
import { identityVerdict, shopVerdict, type ReadyVerdict } from '../identity-status.js';
import type { KubernetesIdentityDirectory } from './directory.js';
import { posResources, SIGNIN_FIELD_MANAGER } from './resources.js';

interface Target {
  readonly informer: Informer;
  readonly ref: ResourceRef;
  readonly kind: string;
  readonly verdict: (obj: KubeObject) => ReadyVerdict;
}

/**
 * Keeps `status.conditions[Ready]` of Shops, ShopUsers and AdminUsers true to what the sign-in API
 * will do with them: a duplicate email, a missing password Secret or a missing Shop shows up in
 * `kubectl get` instead of as a mysterious 401. Runs after every directory change (coalesced), and
 * writes only the statuses that changed, so replicas that both run it converge rather than fight.
 */
export class IdentityStatusReporter {
  private scheduled = false;
  private running: Promise<void> = Promise.resolve();
  private readonly targets: Target[];
  private readonly writers = new Map<string, StatusWriter>();

  constructor(
    private readonly client: KubeClient,
    private readonly directory: KubernetesIdentityDirectory,
    private readonly log?: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {
    const index = directory.index;
    this.targets = [
      { informer: directory.shops, ref: posResources.shops, kind: 'Shop', verdict: (o) => shopVerdict(o) },
      { informer: directory.shopUsers, ref: posResources.shopUsers, kind: 'ShopUser', verdict: (o) => identityVerdict(index, 'ShopUser', o) },
      { informer: directory.adminUsers, ref: posResources.adminUsers, kind: 'AdminUser', verdict: (o) => identityVerdict(index, 'AdminUser', o) },
    ];
    for (const t of this.targets) this.writers.set(t.kind, new StatusWriter({ client, ref: t.ref, kind: t.kind, fieldManager: SIGNIN_FIELD_MANAGER }));
  }

  /** Starts reporting on every directory change; returns the unsubscribe function. */
  start(): () => void {
    const off = this.directory.index.onChange(() => this.schedule());
    this.schedule();
    return off;
  }

  /** Resolves when the reports scheduled so far are written. */
  idle(): Promise<void> {
    return this.running;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // A burst of watch events (the initial list) becomes one pass.
    this.running = this.running.then(
      () =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            this.scheduled = false;
            this.reportAll().then(resolve, (err: unknown) => {
              this.log?.warn({ err }, 'writing sign-in identity status failed; retried on the next change');
              resolve();
            });
          }, 50),
        ),
    );
  }

  async reportAll(): Promise<void> {
    for (const t of this.targets) {
      const writer = this.writers.get(t.kind);
      if (!writer) continue;
      for (const obj of t.informer.list()) {
        if (obj.metadata.deletionTimestamp !== undefined) continue;
        await writer.update(obj, (current) => desiredStatus(current, t.verdict(current), this.now()));
      }
    }
  }
}

function desiredStatus(obj: KubeObject, verdict: ReadyVerdict, now: Date): Record<string, unknown> {
  const status = (typeof obj.status === 'object' && obj.status !== null ? obj.status : {}) as { conditions?: Condition[] };
  const generation = obj.metadata.generation;
  const conditions = setCondition(status.conditions, { type: 'Ready', status: verdict.status, reason: verdict.reason, message: verdict.message, ...(generation === undefined ? {} : { observedGeneration: generation }) }, now);
  return { ...status, ...(generation === undefined ? {} : { observedGeneration: generation }), conditions };
}
