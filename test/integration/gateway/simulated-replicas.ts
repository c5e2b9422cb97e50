/**
 * Model replicas on kwok's simulated Nodes, callable through the gateway. kwok runs no container and its
 * pods' addresses are unreachable by design (dev/cluster/network.ts), so a real server in the model
 * host answers for each Ready pod of a model, listed in the model's Service by an EndpointSlice that the
 * pod owns. The garbage collector deletes that slice with its pod: when the cluster loses a pod, the
 * pod's stand-in leaves the Service as the pod's own address would, with nothing in the test withdrawing it.
 */
import yaml from 'js-yaml';
import { podCidr } from '../../../dev/cluster/network.js';
import { SIMULATED_NODE_LABEL } from '../../../dev/cluster/nodes.js';
import { MODEL_UID_LABEL, servingName } from '../../../src/reconcilers/serving/serving-plan.js';
import { kubectl, testCluster } from '../../support/cluster.js';
import { apply, getJson, post } from './harness.js';

/** The pod range of the test's own Node: outside the six default Nodes', inside the unreachable simulated range. */
const SPOT_POD_RANGE = podCidr(200);

/**
 * A Node of GKE's spot pool (its label and taint, which the machine catalogue's `spot` selects and
 * tolerates), managed by kwok: kwok fills in its status as a kubelet registering it would.
 */
export function spotNodeManifest(name: string): string {
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        [SIMULATED_NODE_LABEL]: 'fake',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
        'cloud.google.com/gke-spot': 'true',
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', [SIMULATED_NODE_LABEL]: 'fake' },
    },
    spec: {
      podCIDR: SPOT_POD_RANGE,
      podCIDRs: [SPOT_POD_RANGE],
      taints: [{ key: 'cloud.google.com/gke-spot', value: 'true', effect: 'NoSchedule' }],
    },
  });
}

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status?: { conditions?: { type: string; status: string }[] };
}

/** The model's pods (they carry the operator's uid label; their owner is a ReplicaSet). */
export async function podsOf(namespace: string, model: string): Promise<Pod[]> {
  const uid = (await getJson(namespace, `deployedmodel/${model}`)).metadata.uid ?? '';
  const r = await kubectl(['get', 'pods', '-n', namespace, '-l', `${MODEL_UID_LABEL}=${uid}`, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl get pods failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { items: Pod[] }).items;
}

/** Puts `port` of the model host behind each Ready pod of `model`; returns the pods' names. */
export async function standInForReadyPods(namespace: string, model: string, port: number): Promise<string[]> {
  const ready = (await podsOf(namespace, model)).filter(
    (p) =>
      p.metadata.deletionTimestamp === undefined &&
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  const slices = ready.map((pod) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${pod.metadata.name}-stand-in`,
      labels: {
        'kubernetes.io/service-name': servingName(model),
        'endpointslice.kubernetes.io/managed-by': 'gateway-test',
      },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid }],
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port, protocol: 'TCP' }],
    endpoints: [
      {
        addresses: [testCluster().modelHost.address],
        conditions: { ready: true },
        targetRef: { kind: 'Pod', namespace, name: pod.metadata.name, uid: pod.metadata.uid },
        ...(pod.spec.nodeName === undefined ? {} : { nodeName: pod.spec.nodeName }),
      },
    ],
  }));
  if (slices.length > 0) await apply(namespace, slices.map((s) => yaml.dump(s)).join('---\n'));
  return ready.map((p) => p.metadata.name);
}

/** One :predict call as the caller saw it. */
export interface Call {
  readonly status: number;
  /** deployedModelId of an answer. */
  readonly id?: string;
  /** Which stand-in server answered. */
  readonly servedBy?: string;
  readonly error?: { readonly status?: string; readonly message?: string };
}

/** One :predict call to `url`. */
export async function predict(url: string): Promise<Call> {
  const r = await post(url, { instances: [{ amount: 35 }] });
  const json = r.json as
    { deployedModelId?: string; predictions?: { servedBy?: string }[]; error?: Call['error'] } | undefined;
  if (r.status !== 200) return { status: r.status, error: json?.error ?? { message: r.text } };
  const call: { status: number; id?: string; servedBy?: string } = { status: r.status };
  if (json?.deployedModelId !== undefined) call.id = json.deployedModelId;
  const servedBy = json?.predictions?.[0]?.servedBy;
  if (servedBy !== undefined) call.servedBy = servedBy;
  return call;
}

/** Calls `url` one after another until stopped: a steady stream of traffic, as a client would send it. */
export function callStream(url: string): { readonly calls: Call[]; stop(): Promise<void> } {
  const calls: Call[] = [];
  let running = true;
  const loop = (async () => {
    while (running) calls.push(await predict(url));
  })();
  return {
    calls,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
