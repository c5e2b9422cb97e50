/**
 * Whether a DeployedModel's containerSpec replicas serve, as a pure function of its Deployment and
 * pods: Ready only when `requiredReplicaCount` replicas are available in a Deployment that has observed
 * its own latest spec (never a child's observedGeneration copied as ours: kserve#6081); Stalled with a
 * specific reason when a person must act (an out-of-memory kill names the limit; a crash loop quotes the
 * server's last lines); otherwise Reconciling with the worst pod's state.
 */
import { Reasons, type DeployedModelReason, type ReadyVerdict } from '../../api/common/conditions.js';
import type { DeploymentStage } from '../../api/prediction/v1/container-spec.js';
import { isRecord, type KubeObject } from '../../api/common/kube-object.js';
import type { Replicas } from './serving-plan.js';

export interface ServingWorld {
  readonly replicas: Replicas;
  /** The name of the model's Deployment (and Service), for messages. */
  readonly deploymentName: string;
  readonly deployment: KubeObject | undefined;
  readonly pods: readonly KubeObject[];
  /** Set when the machine catalogue cannot place the model (MachineTypeUnknown). */
  readonly machineProblem: string | undefined;
  /** Set when the artifact cannot be served: a gs:// bucket the bucket map lacks (ArtifactBucketUnmapped). */
  readonly artifactProblem?: string | undefined;
}

export interface ServingObservation {
  readonly verdict: ReadyVerdict<DeployedModelReason>;
  readonly replicaCount: number;
  readonly availableReplicaCount: number;
  readonly stage: DeploymentStage;
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

function conditions(obj: KubeObject | undefined): Condition[] {
  const status = obj?.status;
  return isRecord(status) && Array.isArray(status.conditions) ? (status.conditions as Condition[]) : [];
}

function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

/** A pod's trouble, worst first: what needs a person, then what is merely slow. */
interface PodState {
  readonly rank: number;
  readonly reason?: DeployedModelReason;
  readonly stage: DeploymentStage;
  readonly message: string;
}

const PULL_FAILURES = new Set(['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'ErrImageNeverPull']);

export function podState(pod: KubeObject): PodState {
  const name = pod.metadata.name ?? '';
  const status = isRecord(pod.status) ? pod.status : {};
  const scheduled = conditions(pod).find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    return {
      rank: 0,
      reason: Reasons.Unschedulable,
      stage: 'ADDING_NODES_TO_CLUSTER',
      message: `pod ${name} cannot be scheduled: ${scheduled.message ?? 'no node fits'}`,
    };
  }
  const containers = Array.isArray(status.containerStatuses)
    ? (status.containerStatuses as Record<string, unknown>[])
    : [];
  for (const c of containers) {
    const waiting = isRecord(c.state) && isRecord(c.state.waiting) ? c.state.waiting : undefined;
    const reason = typeof waiting?.reason === 'string' ? waiting.reason : undefined;
    const detail = typeof waiting?.message === 'string' && waiting.message !== '' ? `: ${waiting.message}` : '';
    if (reason !== undefined && PULL_FAILURES.has(reason))
      return {
        rank: 0,
        reason: Reasons.ImagePullBackOff,
        stage: 'GETTING_CONTAINER_IMAGE',
        message: `pod ${name}: the image cannot be pulled (${reason})${detail}`,
      };
    const exited = exitOf(c);
    const oom = exited !== undefined ? oomKill(pod, c) : undefined;
    if (oom !== undefined)
      return {
        rank: 0,
        reason: Reasons.OOMKilled,
        stage: 'STARTING_MODEL_SERVER',
        message: `pod ${name}: the model server was killed for exceeding its memory limit of ${oom} (OOMKilled, ${num(c.restartCount)} restarts): give it a machine type with more memory (spec.dedicatedResources.machineSpec.machineType)`,
      };
    if (exited !== undefined)
      return {
        rank: 0,
        reason: Reasons.CrashLoopBackOff,
        stage: 'STARTING_MODEL_SERVER',
        message: `pod ${name}: the model server keeps exiting (CrashLoopBackOff, ${num(c.restartCount)} restarts; ${exited})${detail}${imageVolumeNote(pod)}`,
      };
  }
  if (scheduled?.status !== 'True')
    return { rank: 1, stage: 'ADDING_NODES_TO_CLUSTER', message: `pod ${name} is waiting to be scheduled` };
  if (status.phase === 'Pending')
    return { rank: 2, stage: 'GETTING_CONTAINER_IMAGE', message: `pod ${name} is pulling its image and starting` };
  const ready = conditions(pod).find((c) => c.type === 'Ready');
  if (ready?.status !== 'True')
    return {
      rank: 3,
      stage: 'STARTING_MODEL_SERVER',
      message: `pod ${name} is running, not ready yet (startup or readiness probe)`,
    };
  return { rank: 9, stage: 'FINISHING_UP', message: `pod ${name} is ready` };
}

/**
 * For a server that exits while its artifact is an image volume: a runtime without image volumes (containerd before
 * 2.1, CRI-O before 1.31) has been seen to mount an empty directory without an error (k3s#14323), so the server finds
 * no model and exits; the operator cannot see the runtime (it reads no Nodes), so it says where to look.
 */
function imageVolumeNote(pod: KubeObject): string {
  const spec = isRecord(pod.spec) ? pod.spec : {};
  const volumes = Array.isArray(spec.volumes) ? spec.volumes : [];
  const image = volumes.find((v): v is Record<string, unknown> => isRecord(v) && isRecord(v.image));
  const reference = isRecord(image?.image) ? image.image.reference : undefined;
  if (typeof reference !== 'string') return '';
  const node = typeof spec.nodeName === 'string' ? spec.nodeName : 'NODE';
  return `; its artifact is the image volume ${reference}: if the files are missing, the node's container runtime may lack image volumes (containerd before 2.1, CRI-O before 1.31 mount an empty directory): kubectl get node ${node} -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}'`;
}

/** The last termination the kubelet recorded for a container: its current state's, else its last state's. */
function lastTermination(container: Record<string, unknown>): Record<string, unknown> | undefined {
  const terminated = (s: unknown): Record<string, unknown> | undefined =>
    isRecord(s) && isRecord(s.terminated) ? s.terminated : undefined;
  return terminated(container.state) ?? terminated(container.lastState);
}

/**
 * The memory limit of a container whose last end was an out-of-memory kill (the kernel's OOM killer in its
 * cgroup: `OOMKilled`, exit 137), as its pod's spec states it; undefined when it ended otherwise.
 */
export function oomKill(pod: KubeObject, container: Record<string, unknown>): string | undefined {
  if (lastTermination(container)?.reason !== 'OOMKilled') return undefined;
  const spec = isRecord(pod.spec) && Array.isArray(pod.spec.containers) ? pod.spec.containers : [];
  const own = spec.find((c): c is Record<string, unknown> => isRecord(c) && c.name === container.name);
  const limits = isRecord(own?.resources) && isRecord(own.resources.limits) ? own.resources.limits : {};
  return typeof limits.memory === 'string' ? limits.memory : 'its memory limit (none is set in the pod spec)';
}

/** How many of a termination message's last lines a condition quotes, and at most how many characters of them. */
const QUOTED_LINES = 10;
const QUOTED_CHARACTERS = 1024;

/**
 * The end of a termination message: with `FallbackToLogsOnError` the kubelet puts the log's last lines there
 * (up to 80 lines, 2 KiB) when a container fails without writing one, and a crashing server's cause (a Python
 * exception, a missing file) is in its last lines.
 */
export function lastLines(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  const kept = lines.slice(-QUOTED_LINES).join('\n').trim();
  return kept.length <= QUOTED_CHARACTERS ? kept : `…${kept.slice(-QUOTED_CHARACTERS)}`;
}

/**
 * How a container that is not ready last exited, when it did: the kubelet restarts it (a Deployment's pods
 * always restart), so it is in a crash loop. Kubernetes 1.37's kubelet says `waiting.reason: CrashLoopBackOff`
 * only some of the time: between restarts it often leaves the state `terminated` (or `running` again, not yet
 * ready) with the exit in `lastState`, and only its BackOff events name the loop. Reading the exits themselves
 * gives the same reason whichever of these a status write caught, so the verdict does not flap.
 */
export function exitOf(container: Record<string, unknown>): string | undefined {
  if (container.ready === true) return undefined;
  const waiting = isRecord(container.state) && isRecord(container.state.waiting) ? container.state.waiting : undefined;
  const last = lastTermination(container);
  if (last === undefined) return waiting?.reason === 'CrashLoopBackOff' ? 'last exit unknown' : undefined;
  const code = typeof last.exitCode === 'number' ? `code ${last.exitCode}` : 'unknown code';
  const why = typeof last.reason === 'string' && last.reason !== '' ? ` (${last.reason})` : '';
  const quoted = typeof last.message === 'string' ? lastLines(last.message) : '';
  const said = quoted !== '' ? `: ${quoted}` : '';
  return `last exit ${code}${why}${said}`;
}

export function observeServing(world: ServingWorld): ServingObservation {
  const { replicas, deployment } = world;
  const status = isRecord(deployment?.status) ? deployment.status : {};
  const replicaCount = num(status.replicas);
  const available = num(status.availableReplicas);
  const base = { replicaCount, availableReplicaCount: available };
  if (world.machineProblem !== undefined) {
    return {
      ...base,
      stage: 'PREPARING_MODEL',
      verdict: { status: 'False', reason: Reasons.MachineTypeUnknown, message: world.machineProblem },
    };
  }
  if (world.artifactProblem !== undefined) {
    return {
      ...base,
      stage: 'PREPARING_MODEL',
      verdict: { status: 'False', reason: Reasons.ArtifactBucketUnmapped, message: world.artifactProblem },
    };
  }
  if (deployment === undefined) {
    return {
      ...base,
      stage: 'STARTING_DEPLOYMENT',
      verdict: {
        status: 'False',
        reason: Reasons.ReplicasStarting,
        message: `creating Deployment "${world.deploymentName}"`,
      },
    };
  }
  const observed = num(status.observedGeneration) >= (deployment.metadata.generation ?? 0);
  const need = replicas.required;
  if (observed && available >= need) {
    const note = available < replicaCount ? `; ${replicaCount - available} more starting` : '';
    return {
      ...base,
      stage: 'FINISHING_UP',
      verdict: {
        status: 'True',
        reason: Reasons.Reconciled,
        message: `${available} of ${replicaCount} replica(s) of Deployment "${world.deploymentName}" available (${need} required)${note}`,
      },
    };
  }
  const progressing = conditions(deployment).find((c) => c.type === 'Progressing');
  const counted = `${available} of ${need} required replica(s) available`;
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return {
      ...base,
      stage: 'STARTING_MODEL_SERVER',
      verdict: {
        status: 'False',
        reason: Reasons.DeploymentTimeout,
        message: `containerSpec.deploymentTimeout passed with ${counted}: ${worst(world.pods)?.message ?? progressing.message ?? ''}`,
      },
    };
  }
  const bad = worst(world.pods);
  if (bad?.reason !== undefined)
    return {
      ...base,
      stage: bad.stage,
      verdict: { status: 'False', reason: bad.reason, message: `${counted}; ${bad.message}` },
    };
  const waitingFor = !observed
    ? `Deployment "${world.deploymentName}" has not observed its latest spec yet`
    : (bad?.message ?? 'waiting for the Deployment to create pods');
  return {
    ...base,
    stage: bad?.stage ?? 'STARTING_DEPLOYMENT',
    verdict: { status: 'False', reason: Reasons.ReplicasStarting, message: `${counted}; ${waitingFor}` },
  };
}

function worst(pods: readonly KubeObject[]): PodState | undefined {
  let found: PodState | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp !== undefined) continue;
    const s = podState(pod);
    if (found === undefined || s.rank < found.rank) found = s;
  }
  return found?.rank === 9 ? undefined : found;
}
