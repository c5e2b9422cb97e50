/**
 * The chart's gateway fleet on the real node as chart-on-real-node.test.ts watches it through rolling restarts and
 * scaling: the REST and gRPC call streams that must lose no call (test/support/call-stream.ts), the HPA's and the
 * PodDisruptionBudget's status, and what each replica routed to each deployed model (its own /metrics counter).
 */
import { toBinary, type JsonValue } from '@bufbuild/protobuf';
import { GATEWAY_PORTS } from '../../../src/deploy/gateway.js';
import { GATEWAY_NAME } from '../../../src/deploy/values.js';
import { messageFromJson, messageType } from '../../../src/gateway/grpc/services.js';
import { IRIS_INSTANCES } from '../../../dev/models/iris-model.js';
import { startCallStream, type CallStreamResult } from '../../support/call-stream.js';
import { GATEWAY_HOST, NS, type ChartOnRealNode } from './chart-on-real-node-install.js';
import type { Pod } from './chart-on-real-node-objects.js';

const PREDICT_METHOD = '/google.cloud.aiplatform.v1.PredictionService/Predict';
const PredictRequest = messageType('google.cloud.aiplatform.v1.PredictRequest');

/** A PredictRequest for `endpoint`, encoded as the gRPC client sends it (base64 for the caller process). */
function predictRequest(endpoint: string, instances: JsonValue): string {
  const message = toBinary(PredictRequest, messageFromJson(PredictRequest, { endpoint, instances }) as never);
  return Buffer.from(message).toString('base64');
}

export interface PredictStreams {
  /** The bound each stream stops at by itself: a test checks it was not reached. */
  readonly maxCalls: number;
  /** Resolves once both streams had an answer. */
  readonly firstAnswers: Promise<void>;
  stop(): Promise<{ readonly REST: CallStreamResult; readonly gRPC: CallStreamResult }>;
}

/**
 * `ratePerSecond` REST `:predict` calls a second over one keep-alive pool, and as many gRPC `Predict` calls over one
 * channel, to endpoint `pe` through the gateway Service, for at most `seconds`.
 */
export async function startPredictStreams(
  k: ChartOnRealNode['k'],
  o: {
    readonly caPem: string;
    readonly token: string;
    readonly namespace: string;
    readonly pe: string;
    readonly ratePerSecond: number;
    readonly seconds: number;
  },
): Promise<PredictStreams> {
  const clusterIP = (await k(['get', 'service', GATEWAY_NAME, '-n', NS, '-o', 'jsonpath={.spec.clusterIP}'])).trim();
  const pe = JSON.parse(await k(['get', 'pe', o.pe, '-n', o.namespace, '-o', 'json'])) as { status: { name: string } };
  const { ratePerSecond } = o;
  const common = {
    servername: GATEWAY_HOST,
    caPem: o.caPem,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${o.token}` },
    body: JSON.stringify({ instances: IRIS_INSTANCES }),
    ratePerSecond,
    maxCalls: ratePerSecond * o.seconds,
  };
  const rest = startCallStream({ ...common, url: `https://${clusterIP}:443/v1/${pe.status.name}:predict` });
  const grpc = startCallStream({
    ...common,
    url: `https://${clusterIP}:443`,
    grpc: { method: PREDICT_METHOD, messageBase64: predictRequest(pe.status.name, IRIS_INSTANCES.map((i) => [...i])) },
  });
  return {
    maxCalls: common.maxCalls,
    firstAnswers: Promise.all([rest.firstAnswer, grpc.firstAnswer]).then(() => {}),
    stop: async () => {
      const [REST, gRPC] = await Promise.all([rest.stop(), grpc.stop()]);
      return { REST, gRPC };
    },
  };
}

export interface AutoscalerStatus {
  readonly desiredReplicas: number;
  readonly currentReplicas: number;
  /** The gateway pods' mean CPU, percent of their request, as the HPA last read it from metrics.k8s.io. */
  readonly cpuPercent: number | undefined;
}

export async function gatewayAutoscaler(k: ChartOnRealNode['k']): Promise<AutoscalerStatus> {
  const hpa = JSON.parse(await k(['get', 'hpa', GATEWAY_NAME, '-n', NS, '-o', 'json'])) as {
    status: { desiredReplicas?: number; currentReplicas?: number; currentMetrics?: { resource?: { current?: { averageUtilization?: number } } }[] };
  };
  return {
    desiredReplicas: hpa.status.desiredReplicas ?? 0,
    currentReplicas: hpa.status.currentReplicas ?? 0,
    cpuPercent: hpa.status.currentMetrics?.[0]?.resource?.current?.averageUtilization,
  };
}

/**
 * Samples, every `intervalMs` until stopped, what the HPA decided and what it read it from: its mean CPU and desired
 * count, and each gateway pod's CPU in metrics.k8s.io (a pod absent there counts as 100 % of its request when the HPA
 * would scale down). A scale-down that is slow to come is explained by these lines.
 */
export function sampleAutoscaler(k: ChartOnRealNode['k'], intervalMs: number): { stop(): string[] } {
  const since = Date.now();
  const lines: string[] = [];
  const sample = async (): Promise<void> => {
    const hpa = await gatewayAutoscaler(k);
    const list = JSON.parse(await k(['get', '--raw', `/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods`])) as {
      items: { metadata: { name: string }; containers: { name: string; usage: { cpu: string } }[] }[];
    };
    const pods = list.items
      .filter((p) => p.metadata.name.startsWith(`${GATEWAY_NAME}-`))
      .map((p) => `${p.metadata.name.slice(-5)} ${p.containers.map((c) => c.usage.cpu).join('+')}`);
    lines.push(`${((Date.now() - since) / 1000).toFixed(0)} s: HPA ${hpa.cpuPercent ?? '?'} % → ${hpa.desiredReplicas}/${hpa.currentReplicas}, pods ${pods.join(', ')}`);
  };
  const timer = setInterval(() => void sample().catch((err: unknown) => lines.push(String(err))), intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      return lines;
    },
  };
}

export interface DisruptionStatus {
  readonly expectedPods: number;
  readonly currentHealthy: number;
  readonly desiredHealthy: number;
  readonly disruptionsAllowed: number;
}

export async function gatewayDisruptionBudget(k: ChartOnRealNode['k']): Promise<DisruptionStatus> {
  const pdb = JSON.parse(await k(['get', 'pdb', GATEWAY_NAME, '-n', NS, '-o', 'json'])) as { status: Partial<DisruptionStatus> };
  const { expectedPods = 0, currentHealthy = 0, desiredHealthy = 0, disruptionsAllowed = 0 } = pdb.status;
  return { expectedPods, currentHealthy, desiredHealthy, disruptionsAllowed };
}

/** A gateway pod's /metrics text, read on its health port (pods are reachable by IP here) with `token`. */
async function podMetrics(pod: Pod, token: string): Promise<string> {
  const res = await fetch(`http://${pod.status.podIP ?? ''}:${GATEWAY_PORTS.health}/metrics`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET /metrics of ${pod.metadata.name}: ${res.status}`);
  return res.text();
}

/**
 * Each gateway pod's longest event-loop stall (seconds) since its /metrics was last read: prom-client's
 * `nodejs_eventloop_lag_max_seconds`, whose histogram a read resets.
 */
export async function eventLoopStalls(pods: readonly Pod[], token: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    const line = (await podMetrics(pod, token)).split('\n').find((l) => l.startsWith('nodejs_eventloop_lag_max_seconds'));
    out.set(pod.metadata.name, Number(line?.slice(line.lastIndexOf(' ') + 1) ?? Number.NaN));
  }
  return out;
}

/**
 * The calls each gateway pod has routed to each deployed model of endpoint `namespace/endpoint` since it started
 * (pod name → deployed model id → calls), read from its /metrics on the health port (pods are reachable by IP here)
 * with `token`, which may get /metrics.
 */
export async function callsPerModel(pods: readonly Pod[], token: string, namespace: string, endpoint: string): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  for (const pod of pods) {
    const counts = new Map<string, number>();
    for (const line of (await podMetrics(pod, token)).split('\n')) {
      if (!line.startsWith('endpoint_operator_gateway_requests_total{')) continue;
      const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      if (labels['namespace'] !== namespace || labels['endpoint'] !== endpoint || labels['deployed_model'] === '') continue;
      const model = labels['deployed_model'] ?? '';
      counts.set(model, (counts.get(model) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
    out.set(pod.metadata.name, counts);
  }
  return out;
}
