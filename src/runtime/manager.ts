/**
 * Wires informers and controllers together (controller-runtime's Manager, reduced):
 * one shared informer per (resource, namespace, selectors), so two controllers reading
 * DeployedModels share one watch and one cache; informers start on every replica (a standby
 * keeps warm caches and takes over quickly), controllers only run while leading.
 */
import type { Controller } from './controller.js';
import type { HealthCheck } from './health-server.js';
import { Informer, kubeListerWatcher, type Selectors } from './informer.js';
import type { KubeClient } from './kube-client.js';
import type { KubeObject, ResourceRef } from './kube-object.js';
import { silentLogger, type Logger } from './logger.js';

export interface ManagerOptions {
  readonly client: KubeClient;
  readonly logger?: Logger;
}

export class Manager {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly controllers: Controller<KubeObject>[] = [];
  private readonly informerRuns: Promise<void>[] = [];
  private informerSignal: AbortSignal | undefined;
  private readonly log: Logger;

  constructor(private readonly options: ManagerOptions) {
    this.log = options.logger ?? silentLogger;
  }

  /** The shared informer of `ref` (all namespaces when `namespace` is undefined). Started now if informers already run. */
  informer<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace?: string, selectors: Selectors = {}): Informer<T> {
    const id = [ref.group, ref.version, ref.plural, namespace ?? '*', selectors.labelSelector ?? '', selectors.fieldSelector ?? ''].join('|');
    let informer = this.informers.get(id);
    if (!informer) {
      const name = `${ref.group === '' ? 'core' : ref.group}/${ref.version}/${ref.plural}${namespace ? `@${namespace}` : ''}`;
      informer = new Informer<KubeObject>(kubeListerWatcher(this.options.client, ref, namespace, selectors), { name, logger: this.log });
      this.informers.set(id, informer);
      if (this.informerSignal) this.informerRuns.push(informer.run(this.informerSignal));
    }
    return informer as unknown as Informer<T>;
  }

  addController<T extends KubeObject>(controller: Controller<T>): void {
    this.controllers.push(controller as unknown as Controller<KubeObject>);
  }

  /** Starts every informer (now and created later) until `signal` aborts. */
  startInformers(signal: AbortSignal): void {
    if (this.informerSignal) return;
    this.informerSignal = signal;
    for (const informer of this.informers.values()) this.informerRuns.push(informer.run(signal));
  }

  /** Runs every controller until `signal` aborts (pass the leadership signal). */
  async runControllers(signal: AbortSignal): Promise<void> {
    await Promise.all(this.controllers.map((c) => c.run(signal)));
  }

  /** Stops controllers, waiting up to `timeoutMs` for in-flight reconciles; whether all finished. */
  async drain(timeoutMs: number): Promise<boolean> {
    const results = await Promise.all(this.controllers.map((c) => c.shutdown(timeoutMs)));
    return results.every(Boolean);
  }

  /** Resolves once informers stopped (after their signal aborted). */
  async stopped(): Promise<void> {
    await Promise.all(this.informerRuns);
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** Readiness: every informer has synced (leadership does not matter: a standby is ready too). */
  readyCheck(): HealthCheck {
    return () => {
      const pending = [...this.informers.values()].filter((i) => !i.hasSynced()).map((i) => i.name);
      return pending.length === 0 || `informers not synced: ${pending.join(', ')}`;
    };
  }
}
