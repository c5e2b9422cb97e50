/**
 * Each kind the operator reconciles, declared once. A binding's key names the kind's informer, status
 * writer and cache everywhere in the wiring; everything else is derived from its KindDefinition, as
 * controller-runtime's builder derives a controller's name, kind and informer from one type: the
 * resource (the storage version: the operator reads and writes only that one, the API server
 * converts), the controller's name, and the `kind` label of Events, status writes and metrics.
 */
import type { KindDefinition } from './common/kind.js';
import { deployedModelKind, modelKind, predictionEndpointKind } from './prediction/v1/kinds.js';
import { registryEndpointKind, registryServiceKind } from './registry/kinds.js';
import { adminUserKind, shopKind, shopUserKind } from './pos/v1/index.js';
import type { ResourceRef } from './common/kube-object.js';

export interface KindBinding {
  readonly def: KindDefinition;
  /** `PredictionEndpoint`: the kind of its Events and status writes, and its `kind` metrics label. */
  readonly kind: string;
  /** `predictionendpoint`: the controller's name (logs, `controller` metrics label). */
  readonly controllerName: string;
  readonly resource: ResourceRef;
}

function bind(def: KindDefinition): KindBinding {
  const storage = def.versions.find((v) => v.storage) ?? def.versions[0];
  return {
    def,
    kind: def.kind,
    controllerName: def.kind.toLowerCase(),
    resource: { group: def.group, version: storage?.name ?? 'v1', plural: def.plural, namespaced: true },
  };
}

export const kindBindings = {
  predictionEndpoints: bind(predictionEndpointKind),
  deployedModels: bind(deployedModelKind),
  models: bind(modelKind),
  registryServices: bind(registryServiceKind),
  registryEndpoints: bind(registryEndpointKind),
} as const satisfies Record<string, KindBinding>;

/** The key of a reconciled kind: its informer's, status writer's and cache's name. */
export type ReconciledKind = keyof typeof kindBindings;

/** Every key, in declaration order. */
export const reconciledKinds = Object.keys(kindBindings) as readonly ReconciledKind[];

/** `fn` of every binding, keyed like the bindings. */
export function perKind<T>(fn: (binding: KindBinding, key: ReconciledKind) => T): {
  readonly [K in ReconciledKind]: T;
} {
  return Object.fromEntries(reconciledKinds.map((key) => [key, fn(kindBindings[key], key)])) as {
    readonly [K in ReconciledKind]: T;
  };
}

/** The resource of each kind, by key. */
export const resources = perKind((b) => b.resource);

/**
 * The sign-in kinds, bound the same way. They are not in `kindBindings` because they are not watched per shard:
 * their Ready is judged from one namespace's identity index (the sign-in API's cache, src/signin/kube/directory.ts),
 * so the operator runs their controllers once, for the sign-in namespace (src/operator/signin-controllers.ts).
 */
export const signInKindBindings = {
  shops: bind(shopKind),
  shopUsers: bind(shopUserKind),
  adminUsers: bind(adminUserKind),
} as const satisfies Record<string, KindBinding>;

export type SignInKind = keyof typeof signInKindBindings;
