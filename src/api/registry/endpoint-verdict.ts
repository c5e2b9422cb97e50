/**
 * A RegistryEndpoint's readiness as a pure function of the world: the operator writes it to the endpoint's
 * status, a RegistryService lists the endpoints it holds true for, and the gateway's registry cache runs the
 * same rule over its informers, so the three never disagree.
 */
import { Reasons, type ReadyVerdict, type RegistryEndpointReason } from '../common/conditions.js';
import { invalidSpecMessage, type FieldError } from '../common/field-error.js';
import { objectKey, type KubeObject } from '../common/kube-object.js';
import { specOf, statusOf } from '../typed-spec.js';
import { parentServiceName } from './names.js';

export interface RegistryEndpointWorld {
  readonly endpoint: KubeObject;
  /** Whether a RegistryService whose spec.name is the endpoint's parent exists in the namespace. */
  readonly parentExists: boolean;
  readonly specErrors: readonly FieldError[];
  readonly reservedPrefixes: readonly string[];
  readonly now: string;
}

/** The parent service's spec.name of a RegistryEndpoint, when its spec.name is well-formed. */
export function parentOf(endpoint: KubeObject): string | undefined {
  const name = specOf.registryEndpoint(endpoint).name;
  return name === undefined ? undefined : parentServiceName(name);
}

export function registryEndpointVerdict(world: RegistryEndpointWorld): ReadyVerdict<RegistryEndpointReason> {
  const { endpoint } = world;
  if (world.specErrors.length > 0)
    return { status: 'False', reason: Reasons.InvalidSpec, message: invalidSpecMessage(world.specErrors) };
  const name = specOf.registryEndpoint(endpoint).name ?? '';
  const recorded = statusOf.registryEndpoint(endpoint).name;
  if (recorded !== undefined && recorded !== name) {
    // spec.name is immutable (CEL on 1.25+, the webhook otherwise); this change got past both.
    return {
      status: 'False',
      reason: Reasons.InvalidSpec,
      message: `spec.name: Invalid value: ${JSON.stringify(name)}: field is immutable (it was ${JSON.stringify(recorded)}); restore it, or delete the endpoint and create a new one`,
    };
  }
  if (!world.parentExists) {
    return {
      status: 'False',
      reason: Reasons.ParentNotFound,
      message: `spec.name: no RegistryService with spec.name ${JSON.stringify(parentOf(endpoint) ?? '')} in namespace "${endpoint.metadata.namespace ?? ''}"; create it (the endpoint becomes Ready as soon as it exists)`,
    };
  }
  return { status: 'True', reason: Reasons.Reconciled, message: 'registered with its parent service' };
}

/** The index key of a RegistryEndpoint under its parent: `namespace/parent service spec.name`. */
export function endpointParentKey(endpoint: KubeObject): string | undefined {
  const parent = parentOf(endpoint);
  return parent === undefined ? undefined : objectKey(endpoint.metadata.namespace, parent);
}
