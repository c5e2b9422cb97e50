/**
 * The gateway's view of the cluster, from informers (no API call on the request path): which
 * PredictionEndpoint a `status.name` is, its split, the deployed models behind the split's ids, and
 * the ready addresses of each model's backend Service. Every replica watches for itself; nothing is
 * elected, nothing is written.
 *
 * Resolution is cached and the cache is dropped on any watch event, so a `kubectl apply` of a new split
 * reaches the next request as soon as its watch event arrives (milliseconds), and a steady state costs
 * one map lookup per request.
 */
import { backendSchema } from '../api/prediction/v1/backend.js';
import { containerSpecSchema } from '../api/prediction/v1/container-spec.js';
import { containerBackend, type ServedBackend } from '../api/prediction/v1/serving-names.js';
import { resources } from '../api/kind-bindings.js';
import {
  decodeEndpointSlice,
  decodeService,
  endpointSlicesResource,
  findServicePort,
  readyAddresses,
  servicesResource,
  SERVICE_NAME_LABEL,
  type EndpointSlice,
} from '../runtime/endpoint-slices.js';
import type { Informer } from '../kube/informer.js';
import { isRecord, objectKey, type KubeObject } from '../api/common/kube-object.js';
import type { InformerSet } from './informer-set.js';
import { activeEntries, splitSignature, type SplitEntry } from './traffic-split.js';

const BY_RESOURCE_NAME = 'byResourceName';
const BY_SERVICE = 'byService';

export interface ResolvedModel {
  /** The deployed-model id (the split's key). */
  readonly id: string;
  readonly namespace: string;
  /** metadata.name of the DeployedModel. */
  readonly deployedModelName: string;
  /** spec.model without its `@version`. */
  readonly model: string;
  /** The `@version` of spec.model, when given. */
  readonly modelVersionId: string | undefined;
  readonly modelDisplayName: string;
  readonly backend: ServedBackend | undefined;
  /** Why the model cannot be called (no backend, an invalid one, DeployedModel gone); `undefined` = callable. */
  readonly unusable: string | undefined;
}

export interface ResolvedEndpoint {
  readonly namespace: string;
  readonly name: string;
  /** status.name, the path the endpoint is called by. */
  readonly resourceName: string;
  /** The last segment of status.name (Vertex's endpoint id). */
  readonly endpointId: string;
  readonly split: readonly SplitEntry[];
  readonly signature: string;
  /** Deployed models by id, as the endpoint's status lists them. */
  readonly models: ReadonlyMap<string, ResolvedModel>;
  readonly logging: { readonly enabled: boolean; readonly samplingRate: number };
}

/** One address a model is served at: `origin` for the HTTP pool, `basePath` before the protocol path. */
export interface Target {
  readonly origin: string;
  readonly basePath: string;
}

export type TargetSet = { readonly targets: readonly Target[] } | { readonly unavailable: string };

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Informers of one resource over the watched namespaces (one per namespace, or one for all). */
class Scoped {
  constructor(readonly informers: readonly { namespace: string | undefined; informer: Informer }[]) {}

  private scope(namespace: string): Informer | undefined {
    return this.informers.find((i) => i.namespace === undefined || i.namespace === namespace)?.informer;
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.scope(namespace)?.get(namespace, name);
  }

  byIndex(index: string, value: string): KubeObject[] {
    return this.informers.flatMap((i) => i.informer.byIndex(index, value));
  }

  list(namespace: string): KubeObject[] {
    return this.scope(namespace)?.list(namespace) ?? [];
  }
}

export class RoutingTable {
  private readonly endpoints: Scoped;
  private readonly models: Scoped;
  private readonly services: Scoped;
  private readonly slices: Scoped;
  private generation = 0;
  private readonly endpointCache = new Map<string, { generation: number; value: ResolvedEndpoint | undefined }>();
  private readonly targetCache = new Map<string, { generation: number; value: TargetSet }>();

  constructor(informers: InformerSet, namespaces: readonly string[]) {
    const scopes: (string | undefined)[] = namespaces.length > 0 ? [...namespaces] : [undefined];
    const scoped = (
      ref: Parameters<InformerSet['informer']>[0],
      index?: [string, (o: KubeObject) => string[]],
    ): Scoped =>
      new Scoped(
        scopes.map((namespace) => {
          const informer = informers.informer(ref, namespace);
          if (index !== undefined) {
            try {
              informer.addIndex(index[0], index[1]);
            } catch {
              // Shared informer: the index is already there.
            }
          }
          informer.addEventHandler({
            onAdd: () => this.changed(),
            onUpdate: () => this.changed(),
            onDelete: () => this.changed(),
          });
          return { namespace, informer };
        }),
      );
    this.endpoints = scoped(resources.predictionEndpoints, [
      BY_RESOURCE_NAME,
      (pe) => {
        const name = isRecord(pe.status) ? str(pe.status.name) : undefined;
        return name === undefined ? [] : [name];
      },
    ]);
    this.models = scoped(resources.deployedModels);
    this.services = scoped(servicesResource);
    this.slices = scoped(endpointSlicesResource, [
      BY_SERVICE,
      (s) => {
        const service = s.metadata.labels?.[SERVICE_NAME_LABEL];
        return service === undefined ? [] : [objectKey(s.metadata.namespace, service)];
      },
    ]);
  }

  private changed(): void {
    this.generation++;
  }

  /** The endpoint whose status.name is `resourceName`, resolved; `undefined` when there is none. */
  endpoint(resourceName: string): ResolvedEndpoint | undefined {
    const cached = this.endpointCache.get(resourceName);
    if (cached !== undefined && cached.generation === this.generation) return cached.value;
    const value = this.resolveEndpoint(resourceName);
    if (this.endpointCache.size > 10_000) this.endpointCache.clear();
    this.endpointCache.set(resourceName, { generation: this.generation, value });
    return value;
  }

  /** The PredictionEndpoint whose status.name is `resourceName`, as the cache holds it. */
  predictionEndpoint(resourceName: string): KubeObject | undefined {
    // Two objects claiming one status.name (before names were unique): the oldest wins, deterministically.
    return this.endpoints
      .byIndex(BY_RESOURCE_NAME, resourceName)
      .sort(
        (a, b) =>
          (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
          (a.metadata.uid ?? '').localeCompare(b.metadata.uid ?? ''),
      )[0];
  }

  /** The PredictionEndpoints of a namespace (watched or not: none then). */
  predictionEndpoints(namespace: string): KubeObject[] {
    return this.endpoints.list(namespace);
  }

  deployedModel(namespace: string, name: string): KubeObject | undefined {
    return this.models.get(namespace, name);
  }

  private resolveEndpoint(resourceName: string): ResolvedEndpoint | undefined {
    const pe = this.predictionEndpoint(resourceName);
    if (pe === undefined) return undefined;
    const namespace = pe.metadata.namespace ?? '';
    const spec = isRecord(pe.spec) ? pe.spec : {};
    const status = isRecord(pe.status) ? pe.status : {};
    // The split in effect (status.trafficSplit: a new spec split waits for its models); spec from an older operator.
    const split = activeEntries(
      isRecord(status.trafficSplit) ? status.trafficSplit : isRecord(spec.trafficSplit) ? spec.trafficSplit : {},
    );
    const models = new Map<string, ResolvedModel>();
    for (const summary of Array.isArray(status.deployedModels) ? status.deployedModels : []) {
      if (!isRecord(summary)) continue;
      const id = str(summary.id);
      const ref = str(summary.deployedModelRef);
      if (id === undefined || ref === undefined) continue;
      models.set(id, this.resolveModel(namespace, id, ref));
    }
    const logging = isRecord(spec.predictRequestResponseLoggingConfig) ? spec.predictRequestResponseLoggingConfig : {};
    return {
      namespace,
      name: pe.metadata.name ?? '',
      resourceName,
      endpointId: resourceName.slice(resourceName.lastIndexOf('/') + 1),
      split,
      signature: splitSignature(split),
      models,
      logging: {
        enabled: logging.enabled === true,
        samplingRate: typeof logging.samplingRate === 'number' ? logging.samplingRate : 0,
      },
    };
  }

  private resolveModel(namespace: string, id: string, ref: string): ResolvedModel {
    const dm = this.models.get(namespace, ref);
    const spec = dm !== undefined && isRecord(dm.spec) ? dm.spec : {};
    // A DeployedModel that names a Model serves the version its status records (src/reconcilers/model-reference.ts).
    const status = dm !== undefined && isRecord(dm.status) ? dm.status : {};
    const containerSpec = spec.containerSpec ?? (spec.backend === undefined ? status.containerSpec : undefined);
    const fullModel = str(spec.model) ?? '';
    const at = fullModel.indexOf('@');
    const model = at < 0 ? fullModel : fullModel.slice(0, at);
    const base = {
      id,
      namespace,
      deployedModelName: ref,
      model,
      modelVersionId: str(status.modelVersionId) ?? (at < 0 ? undefined : fullModel.slice(at + 1)),
      modelDisplayName: str(spec.displayName) ?? model.slice(model.lastIndexOf('/') + 1),
    };
    if (dm === undefined)
      return { ...base, backend: undefined, unusable: `DeployedModel ${namespace}/${ref} does not exist` };
    if (spec.backend === undefined && containerSpec !== undefined) {
      // A model server the operator runs: its Service, as if spec.backend named it.
      const container = containerSpecSchema.safeParse(containerSpec);
      const endpointName = isRecord(spec.endpointRef) ? str(spec.endpointRef.name) : undefined;
      if (!container.success || endpointName === undefined)
        return {
          ...base,
          backend: undefined,
          unusable: `DeployedModel ${namespace}/${ref} has an invalid spec.containerSpec`,
        };
      return {
        ...base,
        backend: containerBackend({ name: ref, endpointName, id }, container.data),
        unusable: undefined,
      };
    }
    if (spec.backend === undefined)
      return {
        ...base,
        backend: undefined,
        unusable: `DeployedModel ${namespace}/${ref} has no spec.backend: it is recorded, not callable`,
      };
    const parsed = backendSchema.safeParse(spec.backend);
    if (!parsed.success)
      return {
        ...base,
        backend: undefined,
        unusable: `DeployedModel ${namespace}/${ref} has an invalid spec.backend: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      };
    const backend = parsed.data;
    if ((backend.service === undefined) === (backend.url === undefined)) {
      return {
        ...base,
        backend: undefined,
        unusable: `DeployedModel ${namespace}/${ref}: spec.backend needs exactly one of service and url`,
      };
    }
    return { ...base, backend, unusable: undefined };
  }

  /** Where a callable model is served now: the ready addresses of its Service port, or its URL. */
  targets(model: ResolvedModel): TargetSet {
    const key = `${model.namespace}/${model.deployedModelName}`;
    const cached = this.targetCache.get(key);
    if (cached !== undefined && cached.generation === this.generation) return cached.value;
    const value = this.resolveTargets(model);
    if (this.targetCache.size > 10_000) this.targetCache.clear();
    this.targetCache.set(key, { generation: this.generation, value });
    return value;
  }

  private resolveTargets(model: ResolvedModel): TargetSet {
    const backend = model.backend;
    if (backend === undefined) return { unavailable: model.unusable ?? 'no backend' };
    if (backend.url !== undefined) {
      const url = new URL(backend.url);
      return { targets: [{ origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') }] };
    }
    const ref = backend.service;
    if (ref === undefined) return { unavailable: 'no backend' };
    const serviceObj = this.services.get(model.namespace, ref.name);
    const service = serviceObj === undefined ? undefined : decodeService(serviceObj);
    if (service === undefined) return { unavailable: `Service ${model.namespace}/${ref.name} does not exist` };
    const port = findServicePort(service, ref.port);
    if (port === undefined)
      return { unavailable: `Service ${model.namespace}/${ref.name} has no port ${JSON.stringify(ref.port)}` };
    const slices = this.slices
      .byIndex(BY_SERVICE, objectKey(model.namespace, ref.name))
      .map(decodeEndpointSlice)
      .filter((s): s is EndpointSlice => s !== undefined);
    const ready = readyAddresses(slices, port);
    if (ready.length === 0)
      return {
        unavailable: `Service ${model.namespace}/${ref.name} has no ready endpoint on port ${port.name === '' ? port.port : port.name}`,
      };
    return {
      targets: ready.map((a) => ({
        origin: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`,
        basePath: '',
      })),
    };
  }
}
