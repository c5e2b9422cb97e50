/**
 * The status of RegistryServices and RegistryEndpoints as pure functions of the world. A service
 * lists its ready endpoints by running the endpoint's own readiness rule over them, rather than
 * reading their conditions, so the two never disagree and a service does not wait for N endpoint
 * status writes before it converges.
 */
import type { FieldError } from '../api/common/field-error.js';
import type { KubeObject } from '../api/common/kube-object.js';
import { effectiveAnnotations } from '../api/registry/annotations.js';
import {
  Reasons,
  type RegistryEndpointReason,
  type RegistryServiceReason,
  type Written,
} from '../api/common/conditions.js';
import type { RegistryEndpointV1Status } from '../api/registry/v1/endpoint.js';
import type { RegistryServiceStatus as StoredServiceStatus, ResolvedEndpoint } from '../api/registry/v1/service.js';
import { compareStrings } from '../api/common/order.js';
import type { NameClaims } from '../api/registry/name-owner.js';
import {
  conditionsOf,
  invalidSpecMessage,
  isRecord,
  lifecycleTimes,
  withReadyCondition,
  type ReadyVerdict,
} from './status-common.js';
import { specOf, statusOf } from '../api/typed-spec.js';
import { registryEndpointVerdict, type RegistryEndpointWorld } from '../api/registry/endpoint-verdict.js';

/** What the reconcilers write: the CRDs' status types (`z.infer` of their schemas) with the fields they always set. */
export type RegistryEndpointStatus = Written<
  RegistryEndpointV1Status,
  'effectiveAnnotations' | 'createTime' | 'updateTime' | 'observedGeneration' | 'conditions'
>;
export type RegistryServiceStatus = Written<
  StoredServiceStatus,
  'endpoints' | 'effectiveAnnotations' | 'observedGeneration' | 'conditions'
>;
export type { ResolvedEndpoint };

export function computeRegistryEndpointStatus(world: RegistryEndpointWorld): {
  status: RegistryEndpointStatus;
  verdict: ReadyVerdict<RegistryEndpointReason>;
} {
  const { endpoint } = world;
  const previous = statusOf.registryEndpoint(endpoint);
  const verdict = registryEndpointVerdict(world);
  const generation = endpoint.metadata.generation ?? 0;
  const status: RegistryEndpointStatus = {
    effectiveAnnotations: effectiveAnnotations(annotationsOf(endpoint.spec), world.reservedPrefixes),
    ...lifecycleTimes(previous, endpoint.metadata, world.now),
    observedGeneration: generation,
    conditions: withReadyCondition(conditionsOf(endpoint.status), verdict, generation, world.now),
  };
  const recorded = previous.name;
  const name = specOf.registryEndpoint(endpoint).name;
  if (recorded !== undefined) status.name = recorded;
  else if (name !== undefined && world.specErrors.length === 0) status.name = name;
  return { status, verdict };
}

export interface RegistryServiceWorld {
  readonly service: KubeObject;
  /** The RegistryEndpoints of the namespace whose parent is this service's spec.name. */
  readonly endpoints: readonly KubeObject[];
  readonly specErrors: readonly FieldError[];
  /** The validation errors of one endpoint (the service lists only valid ones). */
  readonly endpointErrors: (endpoint: KubeObject) => readonly FieldError[];
  readonly reservedPrefixes: readonly string[];
  readonly now: string;
  /** The RegistryServices (any namespace) that claim this spec.name; absent = this one alone. */
  readonly claims?: NameClaims<KubeObject>;
  /** The cluster DNS projection's outcome when spec.dns is enabled (Ready=True with a note, or why not). */
  readonly dns?: ReadyVerdict<RegistryServiceReason>;
}

/** The service's Ready endpoints (valid, not being deleted, the endpoint's own readiness rule), sorted by name. */
export function readyEndpoints(
  world: Pick<RegistryServiceWorld, 'endpoints' | 'endpointErrors' | 'reservedPrefixes' | 'now'>,
): ResolvedEndpoint[] {
  return world.endpoints
    .filter((e) => e.metadata.deletionTimestamp === undefined)
    .filter(
      (e) =>
        registryEndpointVerdict({
          endpoint: e,
          parentExists: true,
          specErrors: world.endpointErrors(e),
          reservedPrefixes: world.reservedPrefixes,
          now: world.now,
        }).status === 'True',
    )
    .map((e) => resolve(e, world.reservedPrefixes))
    .sort(
      (a, b) =>
        compareStrings(a.name, b.name) ||
        compareStrings(a.address ?? '', b.address ?? '') ||
        (a.port ?? 0) - (b.port ?? 0),
    );
}

function describeClaimant(c: KubeObject): string {
  return `${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`;
}

function serviceVerdict(world: RegistryServiceWorld, ready: number): ReadyVerdict<RegistryServiceReason> {
  if (world.specErrors.length > 0)
    return { status: 'False', reason: Reasons.InvalidSpec, message: invalidSpecMessage(world.specErrors) };
  const name = specOf.registryService(world.service).name ?? '';
  const claims = world.claims;
  if (claims !== undefined && claims.others.length > 0) {
    const isOwner = claims.owner?.metadata.uid === world.service.metadata.uid;
    return isOwner
      ? {
          status: 'False',
          reason: Reasons.NameConflict,
          message: `spec.name: ${JSON.stringify(name)} is also claimed by RegistryService ${claims.others.map(describeClaimant).join(', ')} (created later); this one is the older and keeps resolving; rename or delete the other one`,
        }
      : {
          status: 'False',
          reason: Reasons.NameConflict,
          message: `spec.name: ${JSON.stringify(name)} is already claimed by the older RegistryService ${claims.owner === undefined ? '?' : describeClaimant(claims.owner)}, which resolves; this one does not resolve (nor appear in DNS) until that one is gone; choose another spec.name`,
        };
  }
  if (world.dns !== undefined && world.dns.status !== 'True') return world.dns;
  const dns = world.dns !== undefined ? `; ${world.dns.message}` : '';
  return { status: 'True', reason: Reasons.Reconciled, message: `${ready} ready endpoint(s)${dns}` };
}

export function computeRegistryServiceStatus(world: RegistryServiceWorld): {
  status: RegistryServiceStatus;
  verdict: ReadyVerdict<RegistryServiceReason>;
} {
  const { service } = world;
  const resolved = readyEndpoints(world);
  const verdict = serviceVerdict(world, resolved.length);
  const generation = service.metadata.generation ?? 0;
  const status: RegistryServiceStatus = {
    endpoints: resolved,
    effectiveAnnotations: effectiveAnnotations(annotationsOf(service.spec), world.reservedPrefixes),
    observedGeneration: generation,
    conditions: withReadyCondition(conditionsOf(service.status), verdict, generation, world.now),
  };
  return { status, verdict };
}

function resolve(endpoint: KubeObject, reservedPrefixes: readonly string[]): ResolvedEndpoint {
  const spec = specOf.registryEndpoint(endpoint);
  const out: ResolvedEndpoint = { name: spec.name ?? '' };
  // null and "" are unset (the view already dropped them; the schema's type still admits null).
  if (typeof spec.address === 'string' && spec.address !== '') out.address = spec.address;
  if (typeof spec.port === 'number') out.port = spec.port;
  // Annotations stay the lenient raw map: keys under a reserved prefix are kept unjudged, not dropped with the map.
  const annotations = effectiveAnnotations(annotationsOf(endpoint.spec), reservedPrefixes);
  if (Object.keys(annotations).length > 0) out.annotations = annotations;
  return out;
}

function annotationsOf(spec: unknown): Record<string, string> | undefined {
  const a = isRecord(spec) ? spec.annotations : undefined;
  if (!isRecord(a)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(a)) if (typeof v === 'string') out[k] = v;
  return out;
}
