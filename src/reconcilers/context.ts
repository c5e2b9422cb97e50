/**
 * What every reconciler shares: the client, the informers of the reconciled kinds (kind-bindings.ts)
 * and of the Services and slices behind backends (with the indexes that map an object to the ones
 * that depend on it), the status writers, the event recorder, the clock and settings.
 */
import type { z } from 'zod';
import type { KindDefinition } from '../api/common/kind.js';
import type { Clock } from '../base/clock.js';
import type { EventRecorder } from '../runtime/events.js';
import type { FinalizerFlow } from '../runtime/finalizers.js';
import { PREDICTION_FINALIZER } from '../api/prediction/v1/names.js';
import type { Informer } from '../kube/informer.js';
import type { KubeClient } from '../kube/kube-client.js';
import { objectKey, type KubeObject } from '../api/common/kube-object.js';
import { StatusWriter } from '../runtime/status.js';
import { addBackendIndexes } from './backends.js';
import { FIELD_MANAGER } from './field-manager.js';
import { endpointParentKey } from '../api/registry/endpoint-verdict.js';
import type { IdAssignments } from './deployed-model-ids.js';
import { kindBindings, perKind, type ReconciledKind } from '../api/kind-bindings.js';
import type { OrderingGrace } from './ordering-grace.js';
import type { OwnWrites } from './own-writes.js';
import type { ServingContext } from './serving/serving-model.js';
import { specOf } from '../api/typed-spec.js';

export interface ReconcilerSettings {
  /**
   * `status.name` of endpoints is `projects/{project}/locations/{location}/endpoints/{name}`, where
   * `project` is this template with `{namespace}` replaced (names/endpointProject).
   */
  readonly project: string;
  readonly location: string;
  /** The gateway's base URL, published in PredictionEndpoint `status.url`; absent = not published. */
  readonly gatewayUrl?: string | undefined;
  readonly reservedPrefixes: readonly string[];
}

/** Index names on the informers' caches. */
export const Index = {
  /** DeployedModels by `namespace/spec.endpointRef.name`. */
  modelsByEndpoint: 'byEndpoint',
  /** RegistryEndpoints by `namespace/parent service spec.name`. */
  endpointsByParent: 'byParent',
  /** RegistryServices by `namespace/spec.name`. */
  servicesByName: 'byServiceName',
} as const;

export function modelEndpointKey(model: KubeObject): string | undefined {
  const name = specOf.deployedModel(model).endpointRef?.name;
  return name === undefined ? undefined : objectKey(model.metadata.namespace, name);
}

export function serviceNameKey(service: KubeObject): string | undefined {
  const name = specOf.registryService(service).name;
  return name === undefined ? undefined : objectKey(service.metadata.namespace, name);
}

export type Informers = { readonly [K in ReconciledKind]: Informer } & {
  /** core/v1 Services and their EndpointSlices: where DeployedModel backends get their readiness (backends.ts). */
  readonly services: Informer;
  readonly endpointSlices: Informer;
};

/** Adds the indexes the reconcilers look objects up by; call once, before the informers sync. */
export function addIndexes(informers: Informers): void {
  informers.deployedModels.addIndex(Index.modelsByEndpoint, (m) => optional(modelEndpointKey(m)));
  informers.registryEndpoints.addIndex(Index.endpointsByParent, (e) => optional(endpointParentKey(e)));
  informers.registryServices.addIndex(Index.servicesByName, (s) => optional(serviceNameKey(s)));
  addBackendIndexes(informers);
}

function optional(v: string | undefined): string[] {
  return v === undefined ? [] : [v];
}

export interface ReconcilerContext {
  readonly client: KubeClient;
  readonly informers: Informers;
  readonly settings: ReconcilerSettings;
  readonly events: EventRecorder;
  readonly statusWriters: { readonly [K in ReconciledKind]: StatusWriter };
  readonly ids: IdAssignments;
  readonly grace: OrderingGrace;
  readonly ownWrites: OwnWrites;
  readonly clock: Clock;
  /** The objects of DeployedModels with spec.containerSpec; absent = such models are only reported, not run. */
  readonly serving?: ServingContext | undefined;
}

/**
 * The finalizer every prediction object carries while it lives (one name per API group, as
 * kubebuilder projects do), written as this operator; patches are remembered as our own writes.
 */
export function finalizerFlow(ctx: ReconcilerContext, which: ReconciledKind, signal: AbortSignal): FinalizerFlow {
  return {
    client: ctx.client,
    ref: kindBindings[which].resource,
    finalizer: PREDICTION_FINALIZER,
    fieldManager: FIELD_MANAGER,
    signal,
    onPatched: (before, after) => ctx.ownWrites.replaced(before, after),
  };
}

export function createStatusWriters(client: KubeClient): ReconcilerContext['statusWriters'] {
  return perKind((b) => new StatusWriter({ client, ref: b.resource, kind: b.kind, fieldManager: FIELD_MANAGER }));
}

/**
 * The status as the API server will store it: the CRD's structural schema prunes fields it does
 * not declare, and the zod schema the CRD is generated from strips the same ones. Comparing and
 * writing the pruned form means a field the schema lacks can never cause a write on every
 * reconcile (a hot loop); if the schema rejects the value, it is written as computed and the
 * server's answer decides.
 */
export function asStored(def: KindDefinition, status: unknown): unknown {
  const version = def.versions.find((v) => v.storage) ?? def.versions[0];
  const parsed = (version?.status as z.ZodType | undefined)?.safeParse(status);
  return parsed?.success ? parsed.data : status;
}
