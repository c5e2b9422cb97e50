/**
 * The status of a PredictionEndpoint as a pure function of the world: the endpoint, the
 * DeployedModels that reference it and what they resolve to, and the operator settings.
 */
import type { FieldError } from '../api/common/field-error.js';
import type { KubeObject } from '../api/common/kube-object.js';
import { Reasons, type PredictionEndpointReason, type Written } from '../api/common/conditions.js';
import { computeEtag } from '../api/prediction/v1/etag.js';
import { endpointNameOf, endpointUrl } from '../api/prediction/v1/names.js';
import { compareIds, trafficSplitProblems } from '../api/prediction/v1/traffic.js';
import type {
  DeployedModelSummary,
  PredictionEndpointStatus as StoredStatus,
} from '../api/prediction/v1/endpoint-schema.js';
import type { ModelState } from './deployed-model-ids.js';
import { specOf, statusOf } from '../api/typed-spec.js';
import {
  conditionsOf,
  invalidSpecMessage,
  isRecord,
  lifecycleTimes,
  withReadyCondition,
  type ReadyVerdict,
} from './status-common.js';

/** What the reconciler writes: the CRD's status type (`z.infer` of its schema) with the fields it always sets. */
export type PredictionEndpointStatus = Written<
  StoredStatus,
  | 'name'
  | 'deployedModels'
  | 'deployedModelCount'
  | 'createTime'
  | 'updateTime'
  | 'etag'
  | 'observedGeneration'
  | 'conditions'
>;
export type { DeployedModelSummary };

export interface PredictionEndpointWorld {
  readonly endpoint: KubeObject;
  /** Every DeployedModel in the namespace whose spec.endpointRef.name is this endpoint, including ones being deleted. */
  readonly models: readonly KubeObject[];
  readonly states: ReadonlyMap<string, ModelState>;
  /** The endpoint's validation errors (the webhook's rules, run again). */
  readonly specErrors: readonly FieldError[];
  /** The `--project` template of endpoint names (`{namespace}` replaced): names are unique in the cluster. */
  readonly project: string;
  readonly location: string;
  /** Whether each deployed model serves (deployedModelServingVerdict over the same caches); undefined = Unknown. */
  readonly modelReadiness: (model: KubeObject) => Pick<ReadyVerdict, 'status' | 'reason'> | undefined;
  /** The gateway's base URL; `status.url` is published when it is set. */
  readonly gatewayUrl?: string | undefined;
  /** RFC 3339, second precision. */
  readonly now: string;
}

export interface PredictionEndpointOutcome {
  readonly status: PredictionEndpointStatus;
  readonly verdict: ReadyVerdict<PredictionEndpointReason>;
  /** Deleting and nothing references the endpoint any more: remove the finalizer. */
  readonly releaseFinalizer: boolean;
}

export function computePredictionEndpointStatus(world: PredictionEndpointWorld): PredictionEndpointOutcome {
  const { endpoint, models, states } = world;
  const previous = statusOf.predictionEndpoint(endpoint);
  const deployedModels = models
    .flatMap((m) => {
      const state = states.get(m.metadata.name ?? '');
      return state?.state === 'deployed' ? [summarise(m, state.id, endpoint, world.modelReadiness)] : [];
    })
    .sort((a, b) => compareIds(a.id, b.id));
  const effective = effectiveSplit(world, previous.trafficSplit, deployedModels);
  const verdict = readyVerdict(world, deployedModels, effective);
  const generation = endpoint.metadata.generation ?? 0;
  const name = endpointNameOf(
    { namespace: endpoint.metadata.namespace ?? '', name: endpoint.metadata.name ?? '' },
    world.project,
    world.location,
  );
  const status: PredictionEndpointStatus = {
    name,
    ...(world.gatewayUrl === undefined ? {} : { url: endpointUrl(world.gatewayUrl, name) }),
    deployedModels,
    ...(effective.split === undefined ? {} : { trafficSplit: effective.split }),
    deployedModelCount: deployedModels.length,
    ...lifecycleTimes(previous, endpoint.metadata, world.now),
    etag: computeEtag(endpoint.spec),
    observedGeneration: generation,
    conditions: withReadyCondition(conditionsOf(endpoint.status), verdict, generation, world.now),
  };
  const job = statusOf.predictionEndpoint(endpoint).modelDeploymentMonitoringJob;
  if (job !== undefined) status.modelDeploymentMonitoringJob = job;
  const deleting = endpoint.metadata.deletionTimestamp !== undefined;
  return { status, verdict, releaseFinalizer: deleting && models.length === 0 };
}

export interface EffectiveSplit {
  /** What the gateway routes by; undefined = nothing to route by yet (an invalid first split). */
  readonly split: Record<string, number> | undefined;
  /** The ids the spec's split gives traffic that are not deployed (Ready) yet, when it is not in effect. */
  readonly waitingFor: readonly string[];
}

/**
 * The split in effect. A new spec.trafficSplit takes effect only once every model it gives traffic is
 * deployed (Ready), so a blue/green switch {a: 0, b: 100} never sends a call to a b still starting: the
 * previous split keeps serving until then. Renormalising over ready models instead (KServe) would move
 * traffic nobody asked to move. Once in effect a split stays, also when its models later fail: their
 * calls answer 503 naming the model, the endpoint reports them (DeployedModelUnavailable), and traffic
 * is never silently moved elsewhere. The first split (no previous one) takes effect at once: there is
 * nothing older to keep serving.
 */
export function effectiveSplit(
  world: PredictionEndpointWorld,
  previous: Record<string, number> | undefined,
  deployed: readonly DeployedModelSummary[],
): EffectiveSplit {
  if (world.specErrors.length > 0) return { split: previous, waitingFor: [] };
  const wanted = trafficSplitOf(world.endpoint.spec) ?? {};
  if (previous === undefined || sameSplit(previous, wanted)) return { split: wanted, waitingFor: [] };
  const ready = new Set(deployed.filter((d) => d.ready === 'True').map((d) => d.id));
  const waitingFor = Object.entries(wanted)
    .filter(([id, share]) => share > 0 && !ready.has(id))
    .map(([id]) => id)
    .sort(compareIds);
  return waitingFor.length === 0 ? { split: wanted, waitingFor } : { split: previous, waitingFor };
}

function sameSplit(a: Record<string, number>, b: Record<string, number>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => (a[k] ?? 0) === (b[k] ?? 0));
}

/**
 * The deployed models the split in effect gives traffic whose Ready is False, with their share: their
 * calls answer 503 naming them. Unknown readiness (no verdict yet) is not reported as a failure.
 */
export function unavailableInSplit(
  split: Record<string, number> | undefined,
  deployed: readonly DeployedModelSummary[],
): { model: DeployedModelSummary; share: number }[] {
  return deployed.flatMap((model) => {
    const share = split?.[model.id] ?? 0;
    return share > 0 && model.ready === 'False' ? [{ model, share }] : [];
  });
}

function unavailableMessage(unavailable: ReturnType<typeof unavailableInSplit>): string {
  return unavailable
    .map(
      ({ model, share }) =>
        `status.trafficSplit[${model.id}]: ${share}% of calls go to DeployedModel "${model.deployedModelRef ?? ''}" (id ${model.id}), which is not Ready (${model.reason ?? 'unknown reason'})`,
    )
    .join('; ');
}

function readyVerdict(
  world: PredictionEndpointWorld,
  deployed: readonly DeployedModelSummary[],
  effective: EffectiveSplit,
): ReadyVerdict<PredictionEndpointReason> {
  const { endpoint, models } = world;
  const deployedIds = deployed.map((d) => d.id);
  if (endpoint.metadata.deletionTimestamp !== undefined) {
    if (models.length === 0)
      return {
        status: 'False',
        reason: Reasons.Deleting,
        message: 'no DeployedModel references the endpoint; deleting',
      };
    const names = models.map((m) => m.metadata.name ?? '').sort();
    return {
      status: 'False',
      reason: Reasons.DeletionBlocked,
      message: `deletion waits until ${names.length} DeployedModel(s) referencing this endpoint are undeployed: ${names.join(', ')}; delete them (after removing their ids from spec.trafficSplit)`,
    };
  }
  if (world.specErrors.length > 0) {
    return { status: 'False', reason: Reasons.InvalidSpec, message: invalidSpecMessage(world.specErrors) };
  }
  const split = trafficSplitOf(endpoint.spec);
  const unresolved = trafficSplitProblems(split, deployedIds);
  if (unresolved.length > 0) {
    const fields = unresolved.map((id) => `spec.trafficSplit[${id}]`).join(', ');
    return {
      status: 'False',
      reason: Reasons.TrafficSplitUnresolved,
      message: `${fields}: names no deployed model of this endpoint (deployed: ${deployedIds.length === 0 ? 'none' : deployedIds.join(', ')}); create a DeployedModel with that spec.id or remove the key`,
    };
  }
  const unavailable = unavailableInSplit(effective.split, deployed);
  if (effective.waitingFor.length > 0) {
    // The switch the user asked for comes first; calls failing under the split still serving are said too.
    const meanwhile =
      unavailable.length === 0
        ? ''
        : `; meanwhile ${unavailableMessage(unavailable)}: those calls answer 503 UNAVAILABLE`;
    return {
      status: 'False',
      reason: Reasons.TrafficSplitPending,
      message: `${effective.waitingFor.map((id) => `spec.trafficSplit[${id}]`).join(', ')}: waits until the model(s) it gives traffic are deployed (Ready); until then status.trafficSplit ${JSON.stringify(effective.split ?? {})} keeps serving${meanwhile}`,
    };
  }
  if (unavailable.length > 0) {
    // The split stays as it is (see effectiveSplit): the endpoint says so rather than read Ready while calls fail.
    return {
      status: 'False',
      reason: Reasons.DeployedModelUnavailable,
      message: `${unavailableMessage(unavailable)}: those calls answer 503 UNAVAILABLE and are not moved to other models; fix the model (its Ready condition says why) or move its share in spec.trafficSplit`,
    };
  }
  return {
    status: 'True',
    reason: Reasons.Reconciled,
    message: `${deployedIds.length} deployed model(s)`,
  };
}

/** spec.trafficSplit as numbers; entries of other types are dropped (the validator reports them). */
export function trafficSplitOf(spec: unknown): Record<string, number> | undefined {
  const split = isRecord(spec) ? spec.trafficSplit : undefined;
  if (!isRecord(split)) return undefined;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(split)) if (typeof v === 'number') out[k] = v;
  return out;
}

/**
 * When a model became deployed: when both it and its endpoint existed. Derived from the two
 * creation timestamps (not from the clock) so both reconcilers and every restart agree on it.
 */
export function deployTimeOf(model: KubeObject, endpoint: KubeObject): string | undefined {
  const a = model.metadata.creationTimestamp;
  const b = endpoint.metadata.creationTimestamp;
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}

/** Called for deployed models only, whose spec passed validation: every field is there, typed. */
function summarise(
  model: KubeObject,
  id: string,
  endpoint: KubeObject,
  readiness: PredictionEndpointWorld['modelReadiness'],
): DeployedModelSummary {
  const spec = specOf.deployedModel(model);
  const ready = readiness(model);
  const summary: DeployedModelSummary = {
    id,
    model: spec.model ?? '',
    deployedModelRef: model.metadata.name ?? '',
    ready: ready?.status ?? 'Unknown',
  };
  if (ready !== undefined) summary.reason = ready.reason;
  if (spec.displayName !== undefined) summary.displayName = spec.displayName;
  const createTime = deployTimeOf(model, endpoint);
  if (createTime !== undefined) summary.createTime = createTime;
  const dedicated = spec.dedicatedResources;
  if (dedicated !== undefined) {
    const d: NonNullable<DeployedModelSummary['dedicatedResources']> = {};
    if (dedicated.machineSpec?.machineType !== undefined) d.machineType = dedicated.machineSpec.machineType;
    if (dedicated.minReplicaCount !== undefined) d.minReplicaCount = dedicated.minReplicaCount;
    if (dedicated.maxReplicaCount !== undefined) d.maxReplicaCount = dedicated.maxReplicaCount;
    summary.dedicatedResources = d;
  }
  const automatic = spec.automaticResources;
  if (automatic !== undefined) {
    const a: NonNullable<DeployedModelSummary['automaticResources']> = {};
    if (automatic.minReplicaCount !== undefined) a.minReplicaCount = automatic.minReplicaCount;
    if (automatic.maxReplicaCount !== undefined) a.maxReplicaCount = automatic.maxReplicaCount;
    summary.automaticResources = a;
  }
  return summary;
}
