/**
 * Follows the machine-catalogue ConfigMap (`--machine-catalogue`, in the operator's namespace) with an
 * informer on that one object (a `metadata.name` field selector, which RBAC's resourceNames also allows
 * for list and watch), so an edit takes effect without a restart:
 * - a catalogue that parses replaces the one in effect, and the shards re-enqueue their containerSpec
 *   models (a model Stalled with MachineTypeUnknown deploys once its type is added);
 * - one that does not parse is refused: the catalogue in effect stays, and the refusal is logged, recorded as
 *   a Warning Event on the ConfigMap (`kubectl describe configmap`) and exported as
 *   `endpoint_operator_machine_catalogue_last_load_successful` 0 (what the alert reads), as Prometheus does
 *   with a configuration reload it refuses;
 * - a deleted ConfigMap (or none at start-up) means the built-in catalogue, as a log line says.
 * At start-up an invalid ConfigMap does not stop the operator either (every other kind, and the models
 * already running, would go down with it on each restart): no catalogue is in effect until it parses, so
 * only models that still need one wait (MachineTypeUnknown naming the problem). The built-in one is not
 * used then: the cluster wrote its own, and the built-in's node labels and shapes may not exist on its nodes.
 * Every replica follows the ConfigMap (followers keep warm caches), so each reports a refusal under its own
 * reportingInstance.
 */
import { Gauge } from 'prom-client';
import { deepEqual } from '../runtime/json-diff.js';
import type { EventRecorder } from '../runtime/events.js';
import { Informer, kubeListerWatcher, type EventHandler } from '../kube/informer.js';
import type { KubeClient } from '../kube/kube-client.js';
import { coreResources, type KubeObject } from '../api/common/kube-object.js';
import type { Logger } from '../base/logger.js';
import { metricsRegistry } from '../base/metrics.js';
import {
  DEFAULT_MACHINE_CATALOGUE,
  MACHINE_TYPES_KEY,
  parseMachineCatalogue,
  type CatalogueInEffect,
  type MachineCatalogue,
  type MachineCatalogueSource,
} from '../api/prediction/v1/machine-catalogue.js';

const lastLoadSuccessful = new Gauge({
  name: 'endpoint_operator_machine_catalogue_last_load_successful',
  help: 'Whether the machine-catalogue ConfigMap as it is now parsed (1) or was refused, the previous catalogue staying in effect (0).',
  registers: [metricsRegistry],
});
// Nothing has failed before a ConfigMap is read (and without --machine-catalogue nothing can): an unset gauge would read 0.
lastLoadSuccessful.set(1);

type ConfigMap = KubeObject & { data?: Record<string, string> };

export interface MachineCatalogueWatchOptions {
  readonly namespace: string;
  readonly name: string;
  readonly events: Pick<EventRecorder, 'record'>;
  readonly log: Logger;
}

export class MachineCatalogueWatch implements MachineCatalogueSource, EventHandler<KubeObject> {
  private inEffect: CatalogueInEffect;
  /** The ConfigMap was listed or watched at least once (else, once synced, there is none). */
  private seen = false;
  /** The ConfigMap as it is now was refused. */
  private refused = false;
  private readonly listeners: (() => void)[] = [];
  private readonly where: string;
  private readonly log: Logger;

  constructor(private readonly options: MachineCatalogueWatchOptions) {
    this.where = `ConfigMap ${options.namespace}/${options.name}`;
    this.log = options.log.child({ configMap: `${options.namespace}/${options.name}`, key: MACHINE_TYPES_KEY });
    this.inEffect = { catalogue: undefined, problem: `${this.where} has not been read yet` };
  }

  current(): CatalogueInEffect {
    return this.inEffect;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  onAdd(obj: KubeObject): void {
    this.load(obj as ConfigMap);
  }

  onUpdate(_old: KubeObject, obj: KubeObject): void {
    this.load(obj as ConfigMap);
  }

  onDelete(): void {
    this.accepted();
    this.log.warn(`machine catalogue: ${this.where} was deleted; using the built-in catalogue`);
    this.use(DEFAULT_MACHINE_CATALOGUE);
  }

  /** Called once the informer has listed: no ConfigMap then means the built-in catalogue. */
  synced(): void {
    if (this.seen) return;
    this.log.warn(`machine catalogue: ${this.where} not found; using the built-in catalogue`);
    this.use(DEFAULT_MACHINE_CATALOGUE);
  }

  private load(cm: ConfigMap): void {
    const parsed = parseMachineCatalogue(cm.data);
    // Listed objects carry no apiVersion and kind; the Event's involvedObject needs them.
    const regarding = { ...cm, apiVersion: 'v1', kind: 'ConfigMap' };
    if (!parsed.ok) {
      this.seen = true;
      this.refused = true;
      lastLoadSuccessful.set(0);
      const kept =
        this.inEffect.catalogue === undefined
          ? 'no catalogue is in effect: DeployedModels that need one wait'
          : 'the catalogue in effect is kept';
      if (this.inEffect.catalogue === undefined)
        this.inEffect = { catalogue: undefined, problem: `${this.where} ${parsed.problem}` };
      this.log.error({ problem: parsed.problem }, `machine catalogue: ${this.where} refused; ${kept}`);
      void this.options.events.record(regarding, 'Warning', 'MachineCatalogueInvalid', `${parsed.problem}; ${kept}`);
      return;
    }
    const wasRefused = this.refused;
    this.accepted();
    const { catalogue } = parsed;
    // A label edit or a relist brings nothing new; a fix after a refusal is news even when it restores the same catalogue.
    if (!wasRefused && this.inEffect.catalogue !== undefined && deepEqual(this.inEffect.catalogue, catalogue)) return;
    this.log.info(summary(catalogue), 'machine catalogue: loaded');
    void this.options.events.record(
      regarding,
      'Normal',
      'MachineCatalogueLoaded',
      `${MACHINE_TYPES_KEY} is in effect: ${summaryText(catalogue)}`,
    );
    this.use(catalogue);
  }

  private accepted(): void {
    this.seen = true;
    this.refused = false;
    lastLoadSuccessful.set(1);
  }

  /** Puts `catalogue` in effect; the listeners re-enqueue models only when it differs from the one it replaces. */
  private use(catalogue: MachineCatalogue): void {
    const changed = this.inEffect.catalogue === undefined || !deepEqual(this.inEffect.catalogue, catalogue);
    this.inEffect = { catalogue };
    if (changed) for (const listener of this.listeners) listener();
  }
}

function summary(c: MachineCatalogue): { machineTypes: number; accelerators: number; defaultMachineType: string } {
  return {
    machineTypes: Object.keys(c.machineTypes).length,
    accelerators: Object.keys(c.accelerators).length,
    defaultMachineType: c.defaultMachineType,
  };
}

function summaryText(c: MachineCatalogue): string {
  const s = summary(c);
  return `${s.machineTypes} machine type(s), ${s.accelerators} accelerator type(s), default machine type ${s.defaultMachineType}`;
}

/**
 * The watch of the ConfigMap `--machine-catalogue` names; start.ts runs its informer with the others, so
 * reconciles start only once the ConfigMap has been read.
 */
export function machineCatalogueWatch(
  client: KubeClient,
  options: MachineCatalogueWatchOptions,
  signal: AbortSignal,
): { source: MachineCatalogueWatch; informer: Informer } {
  const source = new MachineCatalogueWatch(options);
  const informer = new Informer(
    kubeListerWatcher(client, coreResources.configMaps, options.namespace, {
      fieldSelector: `metadata.name=${options.name}`,
    }),
    { name: `core/v1/configmaps@${options.namespace}/${options.name}`, logger: options.log },
  );
  informer.addEventHandler(source);
  void informer.waitForSync(signal).then((synced) => {
    if (synced) source.synced();
  });
  return { source, informer };
}
