/**
 * The informers and controllers for one watch scope (one namespace, or all namespaces). Every
 * relation the reconcilers follow is namespace-local, so a multi-namespace operator is simply
 * one shard per namespace.
 */
import { realClock, type Clock } from '../base/clock.js';
import { Controller, type ControllerOptions } from '../runtime/controller.js';
import { endpointSlicesResource, servicesResource } from '../runtime/endpoint-slices.js';
import { Predicates } from '../runtime/predicates.js';
import type { EventRecorder } from '../runtime/events.js';
import { Informer, kubeListerWatcher } from '../kube/informer.js';
import type { KubeClient } from '../kube/kube-client.js';
import { isRecord, keyOf, objectKey, type KubeObject, type ResourceRef } from '../api/common/kube-object.js';
import type { Logger } from '../base/logger.js';
import {
  addIndexes,
  createStatusWriters,
  Index,
  modelEndpointKey,
  serviceNameKey,
  type Informers,
  type ReconcilerContext,
  type ReconcilerSettings,
} from '../reconcilers/context.js';
import { endpointParentKey } from '../api/registry/endpoint-verdict.js';
import { kindBindings, perKind, type KindBinding, type ReconciledKind } from '../api/kind-bindings.js';
import { modelsOfService, modelsOfSlice } from '../reconcilers/backends.js';
import type { IdAssignments } from '../reconcilers/deployed-model-ids.js';
import { ORDERING_GRACE_MS, OrderingGrace } from '../reconcilers/ordering-grace.js';
import { OwnWrites } from '../reconcilers/own-writes.js';
import { deployedModelReconciler } from '../reconcilers/deployed-model.js';
import { modelReconciler } from '../reconcilers/model.js';
import { MODEL_REFERENCE_INDEX, referencedModelKey } from '../reconcilers/model-reference.js';
import { predictionEndpointReconciler } from '../reconcilers/prediction-endpoint.js';
import { registryEndpointReconciler } from '../reconcilers/registry-endpoint.js';
import { registryServiceReconciler } from '../reconcilers/registry-service.js';
import { withErrorReporting } from '../reconcilers/status-write.js';
import { controllerKey, dnsEnabled, DnsOutcomes, registryDnsReconciler } from '../reconcilers/registry-dns.js';
import { dnsServiceName } from '../reconcilers/registry-dns-plan.js';
import { registryNameClaims, type RegistryNameClaims } from '../reconcilers/registry-name-claims.js';
import { specOf } from '../api/typed-spec.js';
import { fixedCatalogue, type MachineCatalogueSource } from '../api/prediction/v1/machine-catalogue.js';
import { servingWiring } from './serving-watches.js';
import { artifactBucketKind, type ArtifactBucketSpec } from '../api/prediction/v1/artifact-bucket.js';
import type { ModelNetworkPolicySettings } from '../reconcilers/serving/network-policy-plan.js';

/** RegistryServices by `namespace/{Service name of their DNS projection}`, and by spec.name alone (any namespace). */
const DNS_NAME_INDEX = 'byDnsServiceName';
const SPEC_NAME_INDEX = 'bySpecName';
/** Services and slices by `namespace/name` of the RegistryService that controls them. */
const CONTROLLER_INDEX = 'byRegistryService';

/** How long a RegistryService waits for more endpoint changes before it rewrites its list. */
export const SERVICE_COALESCE_MS = 1_000;
/**
 * How long the DNS projection waits for more endpoint changes before it writes slices: short, so a
 * slice follows an endpoint change well within a second, yet a burst (a GitOps sync) is one write.
 */
export const DNS_COALESCE_MS = 100;

/** What the registry's cross-namespace rules and the DNS projection share between shards. */
export interface RegistrySharing {
  readonly claims: RegistryNameClaims;
}

export interface ShardOptions {
  readonly client: KubeClient;
  /** `undefined` watches every namespace. */
  readonly namespace: string | undefined;
  readonly settings: ReconcilerSettings;
  readonly workers: number;
  readonly events: EventRecorder;
  readonly ids: IdAssignments;
  readonly log: Logger;
  /** Status timestamps and the ordering grace; default: the wall clock. */
  readonly clock?: Clock;
  /** Default: a 2 s grace for ordering states of new objects. */
  readonly grace?: OrderingGrace;
  /** Shared by every shard of an operator (start.ts); default: this shard alone. */
  readonly registry?: RegistrySharing;
  /** What machineSpec means on this cluster (DeployedModel containerSpec), live; default the built-in catalogue. */
  readonly machineCatalogue?: MachineCatalogueSource;
  /**
   * The bucket map (ModelArtifactBucket, cluster-scoped), one informer shared by every shard (start.ts);
   * default: this shard's own, which it then runs.
   */
  readonly artifactBuckets?: Informer;
  /** Who may reach the pods of a containerSpec model (a NetworkPolicy per model); absent = no policy. */
  readonly modelNetworkPolicy?: ModelNetworkPolicySettings | undefined;
}

export interface Shard {
  readonly informers: Informers;
  readonly controllers: readonly Controller[];
  allInformers(): Informer[];
}

export function createShard(options: ShardOptions): Shard {
  const { client, namespace, log } = options;
  const informer = (ref: ResourceRef): Informer =>
    new Informer(kubeListerWatcher(client, ref, namespace), {
      name: `${ref.group}/${ref.version}/${ref.plural}${namespace ? `@${namespace}` : ''}`,
      logger: log,
    });
  const informers: Informers = {
    ...perKind((b) => informer(b.resource)),
    services: informer(servicesResource),
    endpointSlices: informer(endpointSlicesResource),
  };
  addIndexes(informers);
  const referencedModel = (dm: KubeObject): string[] => optional(referencedModelKey(dm, options.settings));
  informers.deployedModels.addIndex(MODEL_REFERENCE_INDEX, referencedModel);
  const registry = options.registry ?? { claims: registryNameClaims(options.settings) };
  // The DNS projection shares the backends' Service and EndpointSlice informers: every Service of the scope
  // (a foreign one of the same name must be seen); of the slices it reads only those a RegistryService controls.
  const coreServices = informers.services;
  const dnsSlices = informers.endpointSlices;
  coreServices.addIndex(CONTROLLER_INDEX, controllerKey);
  dnsSlices.addIndex(CONTROLLER_INDEX, controllerKey);
  informers.registryServices.addIndex(DNS_NAME_INDEX, (s) => {
    const name = specOf.registryService(s).name;
    return name === undefined ? [] : [objectKey(s.metadata.namespace, dnsServiceName(name))];
  });
  informers.registryServices.addIndex(SPEC_NAME_INDEX, (s) => optional(specOf.registryService(s).name));
  const { claims } = registry;
  claims.observe(informers.registryServices);
  const dnsOutcomes = new DnsOutcomes();
  const clock = options.clock ?? realClock;
  const grace = options.grace ?? new OrderingGrace(ORDERING_GRACE_MS, clock);
  const ownWrites = new OwnWrites();
  const buckets = options.artifactBuckets ?? artifactBucketsInformer(client, log);
  // Run by this shard only when it made it; a shared one is run by its owner.
  const ownBuckets = options.artifactBuckets === undefined ? buckets : undefined;
  const serving = servingWiring(
    client,
    namespace,
    informers,
    options.machineCatalogue ?? fixedCatalogue(),
    (bucket) => bucketSpec(buckets.get(undefined, bucket)),
    options.modelNetworkPolicy,
    log,
  );
  const ctx: ReconcilerContext = {
    client,
    informers,
    settings: options.settings,
    events: options.events,
    statusWriters: createStatusWriters(client),
    ids: options.ids,
    grace,
    ownWrites,
    clock,
    serving: serving.context,
  };
  const controller = (
    name: string,
    which: ReconciledKind,
    reconcile: ControllerOptions<KubeObject>['reconcile'],
  ): Controller =>
    kindController({
      name,
      binding: kindBindings[which],
      primary: informers[which],
      reconcile,
      namespace,
      workers: options.workers,
      log,
    });
  // The status controller of a kind: its binding's name, failures reported in its status.
  const statusController = (which: ReconciledKind, reconcile: ControllerOptions<KubeObject>['reconcile']): Controller =>
    controller(kindBindings[which].controllerName, which, withErrorReporting(ctx, which, reconcile));

  const endpoints = statusController('predictionEndpoints', predictionEndpointReconciler(ctx));
  const models = statusController('deployedModels', deployedModelReconciler(ctx));
  const services = statusController('registryServices', registryServiceReconciler(ctx, { claims, dnsOutcomes }));
  const regEndpoints = statusController('registryEndpoints', registryEndpointReconciler(ctx));
  const registryModels = statusController('models', modelReconciler(ctx));
  const dns = controller(
    'registrydns',
    'registryServices',
    registryDnsReconciler(ctx, {
      controlled: (informer, key) =>
        (informer === 'services' ? coreServices : dnsSlices).byIndex(CONTROLLER_INDEX, key),
      services: coreServices,
      claims,
      outcomes: dnsOutcomes,
      reportOutcome: (key) => services.enqueue(key),
    }),
  );
  // A managed Service or slice changed (a hand edit, a deletion): revert it. A Service that takes the
  // name of a projected one (or frees it) changes whether the projection conflicts.
  dns.watches(dnsSlices, controllerKey);
  dns.watches(coreServices, (svc) => [
    ...controllerKey(svc),
    ...informers.registryServices.byIndex(DNS_NAME_INDEX, keyOf(svc)).map(keyOf),
  ]);
  // Ownership of a name moved (a claim appeared, went, became valid or invalid): every claimant's status,
  // and its DNS projection, change.
  claims.onChange((name) => {
    for (const svc of informers.registryServices.byIndex(SPEC_NAME_INDEX, name)) {
      services.enqueue(keyOf(svc));
      dns.enqueue(keyOf(svc));
    }
  });

  // Every relation a reconciler follows, declared where it is used: "when an object of this
  // informer changes (as far as the predicate cares), reconcile these keys".
  // A DeployedModel change (id assigned, deleted, spec) changes its endpoint's status.deployedModels.
  endpoints.watches(informers.deployedModels, (m) => optional(modelEndpointKey(m)));
  // ...and may settle a sibling's duplicate id (the older claimant went away).
  models.watches(informers.deployedModels, (m) => siblingKeys(informers, m));
  // Dependents care whether a parent exists and about its spec, not about its status: a parent's
  // own status writes would otherwise re-run every child each time.
  // The split in effect (status.trafficSplit) holds a model's undeploy too, so its changes count as well.
  models.watches(
    informers.predictionEndpoints,
    (ep) => informers.deployedModels.byIndex(Index.modelsByEndpoint, keyOf(ep)).map(keyOf),
    { predicate: Predicates.or(Predicates.generationChanged, splitInEffectChanged) },
  );
  regEndpoints.watches(informers.registryServices, (svc) => childEndpointKeys(informers, svc), {
    predicate: Predicates.generationChanged,
  });
  // A RegistryEndpoint change changes its parent's status.endpoints. Endpoints arrive in bursts
  // (a GitOps sync of a hundred files): waiting a moment lets one status write carry them all
  // instead of rewriting a growing list once per endpoint.
  services.watches(informers.registryEndpoints, (e) => parentServiceKeys(informers, e), {
    delayMs: SERVICE_COALESCE_MS,
  });
  // ...and the DNS projection's slices, after a shorter wait: a slice follows an endpoint well within a second.
  dns.watches(informers.registryEndpoints, (e) => parentServiceKeys(informers, e, dnsEnabled), {
    delayMs: DNS_COALESCE_MS,
  });
  // A model's backend readiness follows its Service and the Service's EndpointSlices, and so does
  // the endpoint's status.deployedModels[].ready.
  models.watches(informers.services, (svc) => modelsOfService(informers, svc).map(keyOf));
  models.watches(informers.endpointSlices, (slice) => modelsOfSlice(informers, slice).map(keyOf));
  endpoints.watches(informers.services, (svc) =>
    modelsOfService(informers, svc).flatMap((m) => optional(modelEndpointKey(m))),
  );
  endpoints.watches(informers.endpointSlices, (slice) =>
    modelsOfSlice(informers, slice).flatMap((m) => optional(modelEndpointKey(m))),
  );
  // A Model's status.deployedModels lists the DeployedModels that name it and the version each serves (pinned in
  // the DeployedModel's status, so its status changes count too).
  registryModels.watches(informers.deployedModels, referencedModel);
  // A DeployedModel that names a Model serves one of its versions: a Model that appears, goes, or gains or moves a
  // version or alias changes what it resolves to (its own status writes do not).
  models.watches(
    informers.models,
    (m) => informers.deployedModels.byIndex(MODEL_REFERENCE_INDEX, keyOf(m)).map(keyOf),
    { predicate: Predicates.generationChanged },
  );
  // ...and so does the endpoint's status.deployedModels[].ready, judged from the same resolution.
  endpoints.watches(
    informers.models,
    (m) =>
      informers.deployedModels.byIndex(MODEL_REFERENCE_INDEX, keyOf(m)).flatMap((dm) => optional(modelEndpointKey(dm))),
    { predicate: Predicates.generationChanged },
  );
  // A gs:// artifact is served through the bucket map: a bucket's entry that appears, changes or goes changes what
  // the models naming that bucket mount (one Stalled with ArtifactBucketUnmapped deploys once its bucket is mapped).
  // A model naming a Model may serve any of its versions' buckets, so each of those is queued too.
  models.watches(
    buckets,
    (b) =>
      informers.deployedModels
        .list()
        .filter((m) => namesBucket(m, b.metadata.name ?? '') || referencedModel(m).length > 0)
        .map(keyOf),
    { predicate: Predicates.generationChanged },
  );
  // spec.containerSpec: the model's Deployment, Service, HPA, PDB, NetworkPolicy and pods.
  serving.watch(models, endpoints);

  // Not watch relations but cache housekeeping: what is remembered per object is dropped with it
  // (however it went: our finalizer or not).
  for (const i of Object.values(informers)) {
    i.addEventHandler({
      onDelete: (o: KubeObject) => {
        grace.forget(o.metadata.uid ?? '');
        ownWrites.forget(o);
      },
    });
  }
  informers.deployedModels.addEventHandler({ onDelete: (m) => options.ids.forget(m.metadata.uid ?? '') });

  return {
    informers,
    controllers: [endpoints, models, registryModels, services, regEndpoints, dns],
    allInformers: () => [...Object.values(informers), ...serving.informers, ...(ownBuckets ? [ownBuckets] : [])],
  };
}

/**
 * The controller of one bound kind in one watch scope: every controller of the operator is made here, so each is
 * named `{name}@{namespace}` in logs and metrics, labelled with its binding's kind, and runs `workers` reconciles.
 */
export function kindController(options: {
  readonly name: string;
  readonly binding: KindBinding;
  readonly primary: Informer;
  readonly reconcile: ControllerOptions<KubeObject>['reconcile'];
  /** `undefined`: every namespace. */
  readonly namespace: string | undefined;
  readonly workers: number;
  readonly log: Logger;
}): Controller {
  const { name, namespace } = options;
  return new Controller({
    name: namespace ? `${name}@${namespace}` : name,
    kind: options.binding.kind,
    primary: options.primary,
    reconcile: options.reconcile,
    workers: options.workers,
    logger: options.log,
  });
}

function splitInEffectChanged(oldObj: KubeObject, newObj: KubeObject): boolean {
  const split = (o: KubeObject): string => JSON.stringify(isRecord(o.status) ? o.status.trafficSplit : undefined);
  return split(oldObj) !== split(newObj);
}

function siblingKeys(informers: Informers, model: KubeObject): string[] {
  const key = modelEndpointKey(model);
  if (key === undefined) return [];
  return informers.deployedModels
    .byIndex(Index.modelsByEndpoint, key)
    .filter((m) => m.metadata.uid !== model.metadata.uid)
    .map(keyOf);
}

function childEndpointKeys(informers: Informers, service: KubeObject): string[] {
  const key = serviceNameKey(service);
  return key === undefined ? [] : informers.registryEndpoints.byIndex(Index.endpointsByParent, key).map(keyOf);
}

function parentServiceKeys(
  informers: Informers,
  endpoint: KubeObject,
  which: (service: KubeObject) => boolean = () => true,
): string[] {
  const key = endpointParentKey(endpoint);
  return key === undefined
    ? []
    : informers.registryServices.byIndex(Index.servicesByName, key).filter(which).map(keyOf);
}

/** The bucket map's informer: every ModelArtifactBucket (cluster-scoped, so one for all namespaces). */
export function artifactBucketsInformer(client: KubeClient, log: Logger): Informer {
  return new Informer(kubeListerWatcher(client, artifactBucketsResource, undefined), {
    name: `${artifactBucketsResource.group}/${artifactBucketsResource.version}/${artifactBucketsResource.plural}`,
    logger: log,
  });
}

const artifactBucketsResource: ResourceRef = {
  group: artifactBucketKind.group,
  version: 'v1',
  plural: artifactBucketKind.plural,
  namespaced: false,
};

function bucketSpec(obj: KubeObject | undefined): ArtifactBucketSpec | undefined {
  return obj !== undefined && isRecord(obj.spec) ? (obj.spec as ArtifactBucketSpec) : undefined;
}

function namesBucket(model: KubeObject, bucket: string): boolean {
  const uri = specOf.deployedModel(model).artifactUri;
  return uri === `gs://${bucket}` || uri?.startsWith(`gs://${bucket}/`) === true;
}

function optional(v: string | undefined): string[] {
  return v === undefined ? [] : [v];
}
