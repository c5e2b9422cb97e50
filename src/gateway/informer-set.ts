/**
 * The gateway's shared informers: one per (resource, namespace), so the routing table and every route
 * plugin (the registry lookup) read the same caches over one watch each. Informers created after
 * `start()` start at once. Every replica runs them; nothing is elected.
 */
import type { HealthCheck } from '../runtime/health-server.js';
import { Informer, kubeListerWatcher } from '../kube/informer.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { KubeObject, ResourceRef } from '../api/common/kube-object.js';
import type { Logger } from '../base/logger.js';

export class InformerSet {
  private readonly informers = new Map<string, Informer>();
  private readonly runs: Promise<void>[] = [];
  private signal: AbortSignal | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly log: Logger,
  ) {}

  /** The shared informer of `ref` in `namespace` (all namespaces when undefined). */
  informer<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace?: string): Informer<T> {
    const id = `${ref.group}/${ref.version}/${ref.plural}@${namespace ?? '*'}`;
    let informer = this.informers.get(id);
    if (informer === undefined) {
      informer = new Informer(kubeListerWatcher(this.client, ref, namespace), {
        name: `${ref.group === '' ? 'core' : ref.group}/${ref.version}/${ref.plural}${namespace ? `@${namespace}` : ''}`,
        logger: this.log,
      });
      this.informers.set(id, informer);
      if (this.signal !== undefined) this.runs.push(informer.run(this.signal));
    }
    return informer as unknown as Informer<T>;
  }

  /** Runs every informer (now and created later) until `signal` aborts. */
  start(signal: AbortSignal): void {
    if (this.signal !== undefined) return;
    this.signal = signal;
    for (const informer of this.informers.values()) this.runs.push(informer.run(signal));
  }

  /**
   * Resolves `true` once every informer (those created while waiting too) has its first list, `false` if `signal`
   * aborts first.
   */
  async waitForSync(signal: AbortSignal): Promise<boolean> {
    for (;;) {
      const waiting = [...this.informers.values()];
      if (!(await Promise.all(waiting.map((i) => i.waitForSync(signal)))).every(Boolean)) return false;
      if (this.informers.size === waiting.length) return true;
    }
  }

  readyCheck(): HealthCheck {
    return () => {
      const pending = [...this.informers.values()].filter((i) => !i.hasSynced()).map((i) => i.name);
      return pending.length === 0 || `informers not synced: ${pending.join(', ')}`;
    };
  }

  /** Resolves once every informer stopped (after the start signal aborted). */
  async stopped(): Promise<void> {
    await Promise.all(this.runs);
  }
}
