/**
 * A load test of the chart's gateway as users run one: ghz for gRPC `PredictionService/Predict`, h2load for REST
 * `:predict` over HTTP/2 and (`--h1`) HTTP/1.1, each from inside the real node's network namespace to the gateway's
 * Service (kube-proxy spreads the connections over the gateway pods), over the gateway's TLS with a caller's
 * bearer token. Each arm is bounded by its call count. Around each arm the gateway pods' cgroup CPU
 * (test/support/pod-cgroup-cpu.ts) is read, so each arm says what the gateway's pods spent per call.
 * Shared by chart-on-real-node.test.ts (a short run: the tools run and no call fails) and bench/gateway-load.ts.
 */
import { GATEWAY_NAME } from '../../../src/deploy/values.js';
import { IRIS_INSTANCES } from '../../../dev/models/iris-model.js';
import { ensureGhz, runGhz, type GhzRun } from '../../support/ghz.js';
import { ensureH2load, runH2load, type LoadFigures } from '../../support/h2load.js';
import { podsCpuSeconds } from '../../support/pod-cgroup-cpu.js';
import { GATEWAY_HOST, NS, type ChartOnRealNode } from './chart-on-real-node-install.js';
import type { Pod } from './chart-on-real-node-objects.js';

export const ARMS = ['grpc', 'rest-h2', 'rest-h1'] as const;
export type Arm = (typeof ARMS)[number];

export const ARM_NAMES: Readonly<Record<Arm, string>> = {
  grpc: 'gRPC Predict (ghz)',
  'rest-h2': 'REST :predict over HTTP/2 (h2load)',
  'rest-h1': 'REST :predict over HTTP/1.1 (h2load --h1)',
};

export interface GatewayTarget {
  /** The gateway Service's cluster IP and port. */
  readonly address: string;
  readonly port: number;
  /** The name its certificate carries. */
  readonly servername: string;
  readonly caPem: string;
  readonly token: string;
  /** The endpoint's resource name (projects/…/endpoints/…). */
  readonly endpoint: string;
  readonly instances: readonly unknown[];
  /** The gateway pods' UIDs, whose cgroups are read. */
  readonly podUids: readonly string[];
  readonly tools: { readonly ghz: string; readonly h2load: string };
}

export interface ArmLoad {
  readonly calls: number;
  /** Calls in flight at once, the same in every arm: gRPC and HTTP/2 spread them over `connections`. */
  readonly concurrency: number;
  readonly connections: number;
}

export interface ArmFigures extends LoadFigures {
  readonly arm: Arm;
  /** The gateway pods' CPU seconds over the arm, summed. */
  readonly gatewayCpuSeconds: number;
  /** The wall time between the two readings of that CPU (the tool's run and its start and end). */
  readonly windowSeconds: number;
  /** That divided by the calls, µs. */
  readonly gatewayCpuPerCallUs: number;
}

/**
 * The chart's gateway as the load tools see it: its Service's cluster IP, the `iris` endpoint of `namespace`
 * (chart-on-real-node-objects.ts) called with IRIS_INSTANCES, the gateway pods running now, and the tools.
 */
export async function chartGatewayTarget(
  k: ChartOnRealNode['k'],
  o: { readonly caPem: string; readonly token: string; readonly namespace: string },
): Promise<GatewayTarget> {
  const [ghz, h2load] = [await ensureGhz(), await ensureH2load()];
  const address = (await k(['get', 'service', GATEWAY_NAME, '-n', NS, '-o', 'jsonpath={.spec.clusterIP}'])).trim();
  const pe = JSON.parse(await k(['get', 'pe', 'iris', '-n', o.namespace, '-o', 'json'])) as { status: { name: string } };
  const pods = (JSON.parse(await k(['get', 'pods', '-n', NS, '-l', `app.kubernetes.io/name=${GATEWAY_NAME}`, '-o', 'json'])) as { items: Pod[] }).items;
  const running = pods.filter((p) => p.metadata.deletionTimestamp === undefined && p.status.podIP !== undefined);
  return {
    address,
    port: 443,
    servername: GATEWAY_HOST,
    caPem: o.caPem,
    token: o.token,
    endpoint: pe.status.name,
    instances: IRIS_INSTANCES,
    podUids: running.map((p) => p.metadata.uid),
    tools: { ghz, h2load },
  };
}

/** Runs one arm and reads the gateway pods' CPU around it. */
export async function runArm(arm: Arm, target: GatewayTarget, load: ArmLoad): Promise<ArmFigures> {
  const before = await podsCpuSeconds(target.podUids);
  const started = performance.now();
  const figures = arm === 'grpc' ? await runGhz(target.tools.ghz, ghzRun(target, load)) : await runRest(arm, target, load);
  const gatewayCpuSeconds = (await podsCpuSeconds(target.podUids)) - before;
  const windowSeconds = (performance.now() - started) / 1000;
  return { arm, ...figures, gatewayCpuSeconds, windowSeconds, gatewayCpuPerCallUs: (gatewayCpuSeconds / figures.calls) * 1e6 };
}

function ghzRun(target: GatewayTarget, load: ArmLoad): GhzRun {
  return {
    target: `${target.address}:${target.port}`,
    call: 'google.cloud.aiplatform.v1.PredictionService/Predict',
    data: { endpoint: target.endpoint, instances: target.instances },
    metadata: { authorization: `Bearer ${target.token}` },
    caPem: target.caPem,
    servername: target.servername,
    calls: load.calls,
    concurrency: load.concurrency,
    connections: load.connections,
  };
}

function runRest(arm: 'rest-h2' | 'rest-h1', target: GatewayTarget, load: ArmLoad): Promise<LoadFigures> {
  const http1 = arm === 'rest-h1';
  return runH2load(target.tools.h2load, {
    url: `https://${target.address}:${target.port}/v1/${target.endpoint}:predict`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
    body: JSON.stringify({ instances: target.instances }),
    calls: load.calls,
    // HTTP/1.1 carries one call at a time per connection: as many connections as calls in flight.
    connections: http1 ? load.concurrency : load.connections,
    streams: load.concurrency / load.connections,
    http1,
  });
}
