/**
 * The chart as a user installs it: the container image built from the real Dockerfile (dev/image/), pushed to the
 * real node's local registry, and `helm install`ed by real Helm with the pods placed on the real node
 * (test/support/real-node.ts). The kubelet runs the operator (two replicas, leader election) and the gateway
 * under the chart's securityContext and judges their probes; the kube-apiserver reaches the webhooks through
 * their Service (it routes to the endpoints with a real node); kube-proxy balances the gateway's Service. The
 * models called are DeployedModels with containerSpec, Google's Vertex model server (vertex-sklearn) on the
 * real node serving the iris model.
 *
 * This file starts its own control plane: the real node is one per machine, and the chart's cluster-wide
 * webhook configurations would intercept every other file's objects on the shared one.
 * The test reaches pods by their IPs (this namespace routes the node's pod range to it), and the gateway's
 * Service from inside the node's network namespace, where kube-proxy's rules are.
 */
import { join } from 'node:path';
import yaml from 'js-yaml';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DEPLOY_VALUES, GATEWAY_NAME } from '../../../src/deploy/values.js';
import {
  demoBackendPlan,
  publishDemoBackends,
  startDemoBackends,
  stopDemoBackends,
  type RunningDemoBackend,
} from '../../../dev/environment/demo-backends.js';
import { demoPassword, demoSecrets } from '../../../dev/environment/demo-secrets.js';
import { defaultExamplesDir, loadExampleObjects } from '../../../dev/environment/examples.js';
import type { ControlPlane } from '../../../dev/cluster/index.js';
import type { BuiltImage } from '../../../dev/image/build.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { kubectl } from '../../support/cluster.js';
import { REPO_ROOT } from '../../support/examples.js';
import { awaitTermination, type Termination } from '../../support/real-node-pods.js';
import { mintToken, useCluster } from '../../support/service-accounts.js';
import { eventually } from '../reconcilers/harness.js';
import { CALLER_RBAC, expectedIris, irisModels, readyOf, type Pod } from './chart-on-real-node-objects.js';
import { GATEWAY_AUDIENCE, GATEWAY_HOST, installChartOnRealNode, NS, type ChartOnRealNode, type PublishedImage } from './chart-on-real-node-install.js';
import { IRIS_INSTANCES } from '../../../dev/models/iris-model.js';
import { ARM_NAMES, ARMS, chartGatewayTarget, runArm } from './gateway-load.js';
import { ensureGhz } from '../../support/ghz.js';
import { ensureH2load } from '../../support/h2load.js';
import { ensureMetricsServer, MetricsServer } from '../../support/metrics-server.js';
import { ON_REAL_NODE } from '../../../dev/cluster/real-node/node-config.js';
import { callsPerModel, eventLoopStalls, gatewayAutoscaler, gatewayDisruptionBudget, sampleAutoscaler, startPredictStreams, type DisruptionStatus, type PredictStreams } from './gateway-fleet.js';

const EXAMPLES_NS = 'endpoint-demo';
const LEASE = 'endpoint-operator-leader';
const GRACE_SECONDS = 30;
/** Rolling restarts of the gateway under the call streams: 1 in `npm test`; EO_CHART_GATEWAY_RESTARTS=20 repeats it (issue 49). */
const RESTARTS = Number(process.env['EO_CHART_GATEWAY_RESTARTS'] ?? 1);
/**
 * Scale-downs of the gateway under the call streams: 1 in `npm test` (out by its own CPU under a load, back when it
 * stops); EO_CHART_GATEWAY_SCALE_DOWNS=20 repeats the scale-down, the later ones out by the HPA's minReplicas 3 and
 * back by minReplicas 2 (issue 49).
 */
const SCALE_DOWNS = Number(process.env['EO_CHART_GATEWAY_SCALE_DOWNS'] ?? 1);
/**
 * The gateway's HPA in this file: the chart's defaults (2 to 10 replicas at 70 % of a 100m request), bounded at 3 so
 * that a load on two shared cores makes three replicas and no more, and a scale-down window of 15 s rather than
 * Kubernetes' 300 s so that the test sees the scale-down within a minute of the load's end.
 */
const AUTOSCALING = { ...DEFAULT_DEPLOY_VALUES.gateway.autoscaling, maxReplicas: 3, scaleDownStabilizationSeconds: 15 };
/**
 * The call streams' rate (each, REST and gRPC) while the gateway scales: low enough that they alone let the HPA
 * scale down, which it does from 3 to 2 only at ≤ 46 % of the request. At a few calls a second a call costs the
 * gateway milliseconds of CPU, not the microseconds it costs under a load (a bare Node server's does too, on these
 * machines): 5 a second each kept three replicas near 34 % on a quiet machine, and above 46 % for minutes on one
 * three times slower (CI, 30 Nov), where no replica went. At 1 a second each the streams add about a fifth of that.
 */
const STREAM_RATE_WHILE_SCALING = 1;
/**
 * The call streams of the restart and the scaling tests stop by themselves at their test's own timeout, not sooner: a
 * slow machine then fails a step's deadline, with its reason, rather than outrunning the streams' bound.
 */
const RESTARTS_TIMEOUT_MS = 300_000 * RESTARTS;
const SCALING_TIMEOUT_MS = 420_000 + 180_000 * SCALE_DOWNS;

/** Every call of both streams answered, and the streams ran through `what` rather than stopping at their bound. */
function expectNoCallLost(what: string, tallies: Awaited<ReturnType<PredictStreams['stop']>>, maxCalls: number): void {
  for (const [name, result] of Object.entries(tallies)) {
    console.log(
      `[chart] ${what}, ${name}: ${result.calls} calls in ${result.seconds.toFixed(1)} s, ${result.ok} answered, ${result.failures.length} failed, ${result.deferred} deferred (the caller's pool full) ${JSON.stringify(result.failures.slice(0, 5))}`,
    );
    expect(result.failures, name).toEqual([]);
    expect(result.calls, name).toBeLessThan(maxCalls);
    expect(result.ok, name).toBe(result.calls);
  }
}

describe('the chart installed by Helm, its pods on the real node', () => {
  let image: BuiltImage;
  let operatorImage: PublishedImage;
  let modelImage: PublishedImage;
  let plane: ControlPlane;
  let client: KubeClient;
  let backends: RunningDemoBackend[] = [];
  let password: string;
  let callerToken: string;
  let loadToken: string;
  let metricsToken: string;
  let caPem: string;
  let expected: number[];
  const started = Date.now();
  let k: ChartOnRealNode['k'];
  const pods = async (namespace: string, selector?: string): Promise<Pod[]> =>
    (JSON.parse(await k(['get', 'pods', '-n', namespace, ...(selector === undefined ? [] : ['-l', selector]), '-o', 'json'])) as { items: Pod[] }).items;
  const runningPods = async (selector: string): Promise<Pod[]> =>
    (await pods(NS, selector)).filter((p) => p.metadata.deletionTimestamp === undefined && p.status.podIP !== undefined);
  const OPERATOR = 'app.kubernetes.io/name=endpoint-operator';
  const GATEWAY = `app.kubernetes.io/name=${GATEWAY_NAME}`;
  const holder = async (): Promise<string> =>
    (await k(['get', 'lease', LEASE, '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}'])).trim();

  beforeAll(async () => {
    // The load tools are built (ghz: minutes, cold) or installed beside the image build, not inside their test's time.
    const tools = Promise.all([ensureGhz(), ensureH2load(), ensureMetricsServer()]);
    tools.catch(() => {}); // awaited below; not an unhandled rejection while the chart installs
    const installed = await installChartOnRealNode({
      name: 'chart',
      // The sign-in namespace must exist before the chart's Role in it.
      namespaces: [EXAMPLES_NS],
      values: { signin: { enabled: true, namespace: EXAMPLES_NS } },
      gateway: { autoscaling: AUTOSCALING },
    });
    ({ image, operatorImage, modelImage, plane, k } = installed);
    client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
    useCluster(plane.kubeconfigPath);

    const objects = await loadExampleObjects(defaultExamplesDir());
    backends = await startDemoBackends(demoBackendPlan(objects), [], plane.modelHost);
    password = demoPassword();
    const secrets = (await demoSecrets(objects, password)).map((s) => yaml.dump(s.secret));
    const all = [...secrets, ...objects.map((o) => yaml.dump(o)), ...irisModels(modelImage.ref, EXAMPLES_NS).map((o) => yaml.dump(o))];
    await eventually('the examples applied (the webhooks answer)', () => k(['apply', '-f', '-'], all.join('---\n')), 60_000);
    await publishDemoBackends(client, backends, plane.modelHost.address);
    await k(['apply', '-f', '-'], CALLER_RBAC(EXAMPLES_NS));
    callerToken = await mintToken(EXAMPLES_NS, 'chart-test-caller', [GATEWAY_AUDIENCE]);
    loadToken = await mintToken(EXAMPLES_NS, 'chart-test-load', [GATEWAY_AUDIENCE]);
    // A pod's own token has the kube-apiserver's audience: a scraper's, for /metrics.
    metricsToken = await mintToken(EXAMPLES_NS, 'chart-test-load', []);
    caPem = await installed.gatewayCa();
    expected = await expectedIris();
    await tools;
  }, 1_800_000);

  afterAll(async () => {
    useCluster(undefined);
    await stopDemoBackends(backends);
    client?.close();
    await plane?.stop();
    console.log(`[chart] whole file: ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }, 180_000);

  it('adds at most 40 MB to its base image', () => {
    const added = image.sizeBytes - image.baseSizeBytes;
    console.log(`image ${image.name}: ${(image.sizeBytes / 1e6).toFixed(1)} MB, ${(added / 1e6).toFixed(1)} MB on top of ${image.base} (${(image.baseSizeBytes / 1e6).toFixed(1)} MB); build ${image.seconds.toFixed(0)} s`);
    expect(added).toBeLessThanOrEqual(40e6);
  });

  it('runs every pod on the real node from the registry, on a read-only root filesystem with /tmp writable, as uid 65532 without capabilities', async () => {
    const chartPods = [...(await runningPods(OPERATOR)), ...(await runningPods(GATEWAY))];
    expect(chartPods).toHaveLength(4);
    for (const pod of chartPods) {
      const name = pod.metadata.name;
      const container = pod.spec.containers[0]?.name ?? '';
      expect(pod.spec.nodeName, name).toBe(plane.realNode?.name);
      expect(pod.spec.containers[0]?.image, name).toBe(operatorImage.ref);
      const exec = (cmd: string[]) => kubectl(['exec', '-n', NS, name, '-c', container, '--', ...cmd], { kubeconfig: plane.kubeconfigPath });
      const root = await exec(['node', '-e', "require('fs').writeFileSync('/app/probe', 'x')"]);
      expect(root.code, name).not.toBe(0);
      expect(root.stderr, name).toContain('EROFS');
      const tmp = await exec(['node', '-e', "require('fs').writeFileSync('/tmp/probe', 'x'); console.log(process.getuid(), process.getgid())"]);
      expect(tmp.code, `${name}: ${tmp.stderr}`).toBe(0);
      expect(tmp.stdout.trim(), name).toBe('65532 65532');
      // The container's own process (PID 1), not the exec'd one: what the kubelet started.
      const status = await exec(['grep', '-E', '^(Uid|CapEff|CapBnd|NoNewPrivs)', '/proc/1/status']);
      expect(status.stdout, name).toMatch(/^Uid:\t65532\t65532\t65532\t65532$/m);
      expect(status.stdout, name).toContain('CapEff:\t0000000000000000');
      expect(status.stdout, name).toContain('CapBnd:\t0000000000000000');
      expect(status.stdout, name).toContain('NoNewPrivs:\t1');
    }
  });

  it('converges the examples to Ready with the operator in its pod', async () => {
    let waiting = '';
    await eventually(
      'every example Ready',
      async () => {
        const items = (JSON.parse(await k(['get', 'endpoint-operator', '-n', EXAMPLES_NS, '-o', 'json'])) as { items: Parameters<typeof readyOf>[0][] }).items;
        const notReady = items.filter((o) => readyOf(o)?.status !== 'True');
        // Said on a timeout: which objects, and why.
        waiting = notReady.map((o) => `${o.kind}/${o.metadata.name}: ${readyOf(o)?.reason ?? 'no Ready'} ${readyOf(o)?.message ?? ''}`).join('; ');
        return items.length > 0 && notReady.length === 0 ? items : undefined;
      },
      300_000,
    ).catch(async (err: unknown) => {
      const leader = await holder();
      throw new Error(`${String(err)}; not Ready: ${waiting}; leader ${leader} log: ${await k(['logs', '-n', NS, leader, '--tail=30'])}`);
    });
    const iris = (await pods(EXAMPLES_NS)).filter((p) => p.spec.containers[0]?.image === modelImage.ref);
    expect(iris.map((p) => p.spec.nodeName)).toEqual(iris.map(() => plane.realNode?.name));
    expect(iris.length).toBeGreaterThanOrEqual(2);
  }, 330_000);

  it('answers the kube-apiserver with the admission and conversion webhooks served from the pod', async () => {
    const vwc = await k(['get', 'validatingwebhookconfigurations', '-o', 'jsonpath={.items[*].webhooks[*].clientConfig.service.name}']);
    expect(vwc.split(' ').filter((s) => s !== '').every((s) => s === 'endpoint-operator-webhook')).toBe(true);
    const slices = await k(['get', 'endpointslices', '-n', NS, '-l', 'kubernetes.io/service-name=endpoint-operator-webhook', '-o', 'jsonpath={.items[*].endpoints[*].addresses[*]}']);
    expect(slices.split(' ').sort()).toEqual((await runningPods(OPERATOR)).map((p) => p.status.podIP).sort());
    const invalid = await kubectl(['apply', '-f', join(REPO_ROOT, 'examples/invalid/prediction/pe-bigquery-table-too-long.yaml'), '-n', EXAMPLES_NS], { kubeconfig: plane.kubeconfigPath });
    expect(invalid.code).not.toBe(0);
    // A rule only the webhook enforces (the CRD cannot count a part's UTF-8 bytes), so only the webhook can have
    // written this message; it answers a 422 Status, which kubectl shows as "is invalid".
    expect(invalid.stderr).toMatch(/spec\.predictRequestResponseLoggingConfig\.bigqueryDestination\.outputUri: Invalid value: .*1024 UTF-8 bytes/);
    // Stored as v1; read as v1beta1, the kube-apiserver asks the conversion webhook (v1beta1 calls annotations `metadata`).
    const beta = await k(['get', 'registryendpoints.v1beta1.registry.endpoint-operator.dev', '-n', EXAMPLES_NS, '-o', 'json']);
    const items = (JSON.parse(beta) as { items: { apiVersion: string; spec: Record<string, unknown> }[] }).items;
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) {
      expect(item.apiVersion).toBe('registry.endpoint-operator.dev/v1beta1');
      expect(item.spec).not.toHaveProperty('annotations');
    }
    expect(items.some((i) => i.spec['metadata'] !== undefined)).toBe(true);
  });

  it('serves a predict routed by the split to the real model server, and a resolve, from a gateway pod', async () => {
    const [gateway] = await runningPods(GATEWAY);
    const dispatcher = new Agent({ connect: { ca: caPem, servername: GATEWAY_HOST } });
    const post = async (path: string, body: unknown) => {
      const res = await undiciFetch(`https://${gateway?.status.podIP ?? ''}:8090${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${callerToken}` },
        body: JSON.stringify(body),
        dispatcher,
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const pe = JSON.parse(await k(['get', 'pe', 'iris', '-n', EXAMPLES_NS, '-o', 'json'])) as { spec: { trafficSplit: Record<string, number> }; status: { name: string } };
    const seen = new Map<string, number>();
    // 40 calls of a 70/30 split: the chance that either model is never picked is below 1e-6.
    for (let i = 0; i < 40; i++) {
      const r = await post(`/v1/${pe.status.name}:predict`, { instances: IRIS_INSTANCES });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body['predictions']).toEqual(expected);
      const id = String(r.body['deployedModelId']);
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual(Object.keys(pe.spec.trafficSplit).sort());

    const service = 'projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout';
    const r = await post(`/v1/${service}:resolve`, { maxEndpoints: 10 });
    const resolved = r.body as { service?: { name?: string; endpoints?: unknown[] } };
    expect(r.status, JSON.stringify(resolved)).toBe(200);
    expect(resolved.service?.name).toBe(service);
    expect(resolved.service?.endpoints?.length).toBeGreaterThan(0);
    await dispatcher.close();
  });

  it('carries gRPC Predict under ghz and REST :predict under h2load (HTTP/2 and HTTP/1.1) through the gateway Service, no call failed', async () => {
    const target = await chartGatewayTarget(k, { caPem, token: callerToken, namespace: EXAMPLES_NS });
    expect(target.podUids).toHaveLength(DEFAULT_DEPLOY_VALUES.gateway.autoscaling.minReplicas);
    // A short run of each arm (bench/gateway-load.ts is the long one): the tools really run, and every call is answered.
    const load = { calls: 200, concurrency: 8, connections: 2 };
    for (const arm of ARMS) {
      const f = await runArm(arm, target, load);
      console.log(`[chart] ${ARM_NAMES[arm]}: ${f.calls} calls, ${f.ok} ok, ${f.perSecond.toFixed(0)}/s, p50 ${f.p50Ms.toFixed(1)} ms, p99 ${f.p99Ms.toFixed(1)} ms, gateway CPU ${f.gatewayCpuPerCallUs.toFixed(0)} µs a call`);
      expect(f.failures, arm).toBe('');
      expect([f.calls, f.ok, f.failed], arm).toEqual([load.calls, load.calls, 0]);
      expect(f.gatewayCpuSeconds, arm).toBeGreaterThan(0);
    }
  }, 240_000);

  it('answers a sign-in from an operator pod', async () => {
    for (const pod of await runningPods(OPERATOR)) {
      const res = await fetch(`http://${pod.status.podIP ?? ''}:${DEFAULT_DEPLOY_VALUES.signin.port}/auth/pos/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ana.silva@example.com', password }),
      });
      const body = (await res.json()) as { status?: string; accessToken?: string };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.status).toBe('authenticated');
      expect(body.accessToken).toMatch(/^ey/);
    }
  });

  it('keeps every REST and gRPC call answered through rolling restarts of the gateway, and each old gateway ends with exit 0 in its grace period', async () => {
    const streams = await startPredictStreams(k, { caPem, token: callerToken, namespace: EXAMPLES_NS, pe: 'iris', ratePerSecond: 15, seconds: RESTARTS_TIMEOUT_MS / 1000 });
    await streams.firstAnswers;
    const rounds: string[] = [];
    const ends: (Termination & { round: number; pod: string | undefined })[] = [];
    for (let round = 1; round <= RESTARTS; round++) {
      const old = await runningPods(GATEWAY);
      const ended = old.map((p) => awaitTermination(plane.kubeconfigPath, NS, p.metadata.name, 'gateway', 120_000));
      const restarting = Date.now();
      await k(['rollout', 'restart', `deployment/${GATEWAY_NAME}`, '-n', NS]);
      await k(['rollout', 'status', `deployment/${GATEWAY_NAME}`, '-n', NS, '--timeout=180s']);
      const terminations = await Promise.all(ended);
      rounds.push(
        `${((Date.now() - restarting) / 1000).toFixed(1)} s (old pods ended in ${terminations.map((t) => `${t.seconds.toFixed(1)} s, ${t.exitCode} ${t.reason}`).join('; ')})`,
      );
      ends.push(...terminations.map((t, i) => ({ round, pod: old[i]?.metadata.name, ...t })));
    }
    // A few more calls to the new pods alone, then the tallies.
    await new Promise((r) => setTimeout(r, 2_000));
    const tallies = await streams.stop();
    console.log(`[chart] restarts: ${rounds.join(' | ')}`);
    expectNoCallLost(`${RESTARTS} rolling restart(s) of the gateway`, tallies, streams.maxCalls);
    expect(ends.filter((t) => t.exitCode !== 0 || t.seconds >= GRACE_SECONDS)).toEqual([]);
  }, RESTARTS_TIMEOUT_MS);

  it('stops on SIGTERM (pod deletion) within the grace period with exit code 0, the lease taken by a live replica at once', async () => {
    const operators = await runningPods(OPERATOR);
    const leader = await holder();
    const other = operators.find((p) => p.metadata.name !== leader)?.metadata.name;
    expect(operators.map((p) => p.metadata.name)).toContain(leader);
    const ended = awaitTermination(plane.kubeconfigPath, NS, leader, 'operator', (GRACE_SECONDS + 30) * 1000);
    const deleting = Date.now();
    await k(['delete', 'pod', leader, '-n', NS, '--wait=false']);
    const stopped = await ended;
    const seen = (Date.now() - deleting) / 1000;
    const handedOver = Date.now();
    expect(stopped.exitCode).toBe(0);
    expect(stopped.seconds).toBeLessThan(GRACE_SECONDS);
    // The other old replica retries every 2 s, and the Deployment's replacement for the deleted pod starts at once:
    // either may win the released lease; what matters is that a live replica holds it without waiting out 15 s.
    const live = async (): Promise<string | undefined> => {
      const now = await holder();
      const running = (await runningPods(OPERATOR)).map((p) => p.metadata.name);
      return now !== leader && running.includes(now) ? now : undefined;
    };
    const taker = await eventually('a live replica holds the lease', live, 30_000);
    const takeover = (Date.now() - handedOver) / 1000;
    console.log(`[chart] operator ${leader} stopped ${stopped.seconds.toFixed(0)} s after its deletion by the kubelet's clock (seen here after ${seen.toFixed(1)} s); ${taker === other ? 'the other replica' : 'its replacement'} ${taker} took the lease ${takeover.toFixed(1)} s later`);
    // The lease lasts 15 s: a released one is taken on the follower's next try (retry period 2 s).
    expect(takeover).toBeLessThan(8);
  }, 120_000);
  it('scales the gateway out to three replicas on its own CPU under a load and back to two when it stops, every REST and gRPC call answered, the split exact across the replicas, the PDB right at each size', async () => {
    const metrics = await MetricsServer.start(plane, Object.entries(ON_REAL_NODE.nodeSelector).map(([key, v]) => `${key}=${v}`).join(','));
    const deployment = `deployment/${GATEWAY_NAME}`;
    const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);
    const pdb = (expectedPods: number): Promise<DisruptionStatus> =>
      eventually(`the gateway PDB at ${expectedPods} pods`, async () => {
        const status = await gatewayDisruptionBudget(k);
        return status.expectedPods === expectedPods && status.currentHealthy === expectedPods ? status : undefined;
      }, 60_000);
    try {
      const top = await eventually('kubectl top shows the gateway pods', async () => {
        const r = await kubectl(['top', 'pods', '-n', NS, '-l', GATEWAY], { kubeconfig: plane.kubeconfigPath });
        return r.code === 0 && r.stdout.includes(GATEWAY_NAME) ? r.stdout : undefined;
      }, 120_000);
      console.log(`[chart] kubectl top pods:\n${top}`);
      const streams = await startPredictStreams(k, { caPem, token: callerToken, namespace: EXAMPLES_NS, pe: 'iris', ratePerSecond: STREAM_RATE_WHILE_SCALING, seconds: SCALING_TIMEOUT_MS / 1000 });
      await streams.firstAnswers;
      const rounds: string[] = [];
      const ends: (Termination & { cycle: number; pod: string })[] = [];
      for (let cycle = 1; cycle <= SCALE_DOWNS; cycle++) {
        const scaling = Date.now();
        if (cycle === 1) {
          // A bounded gRPC load (ghz, from another caller) in rounds until the third replica is Ready: the HPA reads
          // the gateway's CPU from metrics-server one to two scrapes late, and syncs every 15 s.
          const target = await chartGatewayTarget(k, { caPem, token: loadToken, namespace: EXAMPLES_NS });
          const deadline = Date.now() + 240_000;
          let loadCalls = 0;
          const ready = async (): Promise<number> => Number((await k(['get', deployment, '-n', NS, '-o', 'jsonpath={.status.readyReplicas}'])).trim());
          while ((await ready()) < 3) {
            if (Date.now() > deadline) throw new Error(`the gateway did not scale out within 240 s of load (${loadCalls} calls): ${JSON.stringify(await gatewayAutoscaler(k))}`);
            const f = await runArm('grpc', target, { calls: 1500, concurrency: 8, connections: 4 });
            expect([f.failed, f.failures], 'the load').toEqual([0, '']);
            loadCalls += f.calls;
          }
          rounds.push(`cycle 1: out to 3 after ${seconds(scaling)} s of load (${loadCalls} gRPC calls; HPA ${JSON.stringify(await gatewayAutoscaler(k))})`);
          // 1,000 REST calls over 24 connections, which kube-proxy spreads over the three replicas: each replica's
          // picks keep the split exactly (smooth weighted round-robin: within 1 of 70 % in any run of calls, plus
          // the two streams' calls in flight at either reading), so the fleet's within 1 per 100.
          const three = await runningPods(GATEWAY);
          expect(three).toHaveLength(3);
          const stalls = await eventLoopStalls(three, metricsToken);
          console.log(`[chart] longest event-loop stall of each gateway pod under the load: ${[...stalls.values()].map((s) => `${(s * 1000).toFixed(0)} ms`).join(', ')}`);
          // A Ready pod takes calls once its Service's EndpointSlice lists it and kube-proxy has written that: the
          // slice is awaited, then kube-proxy's 1 s minimum sync period and a second of margin.
          const uids = three.map((p) => p.metadata.uid).sort();
          await eventually('the gateway Service lists the three pods ready', async () => {
            const ready = await k(['get', 'endpointslices', '-n', NS, '-l', `kubernetes.io/service-name=${GATEWAY_NAME}`, '-o', 'jsonpath={range .items[*].endpoints[?(@.conditions.ready==true)]}{.targetRef.uid}{"\\n"}{end}']);
            return JSON.stringify(ready.split('\n').filter((u) => u !== '').sort()) === JSON.stringify(uids) ? true : undefined;
          }, 60_000);
          await new Promise((r) => setTimeout(r, 2_000));
          const before = await callsPerModel(three, metricsToken, EXAMPLES_NS, 'iris');
          const spread = await runArm('rest-h1', { ...target, podUids: three.map((p) => p.metadata.uid) }, { calls: 1000, concurrency: 24, connections: 24 });
          expect([spread.calls, spread.ok, spread.failures]).toEqual([1000, 1000, '']);
          const after = await callsPerModel(three, metricsToken, EXAMPLES_NS, 'iris');
          const split = three.map((p) => {
            const count = (id: string): number => (after.get(p.metadata.name)?.get(id) ?? 0) - (before.get(p.metadata.name)?.get(id) ?? 0);
            return { pod: p.metadata.name, a: count('7001'), b: count('7002') };
          });
          console.log(`[chart] split over the 1,000 calls (and the streams' meanwhile), per replica 7001/7002: ${split.map((r) => `${r.a}/${r.b}`).join(', ')}`);
          const [a, b] = [split.reduce((n, r) => n + r.a, 0), split.reduce((n, r) => n + r.b, 0)];
          expect(a + b).toBeGreaterThanOrEqual(1000);
          expect(Math.abs(a - 0.7 * (a + b))).toBeLessThanOrEqual((a + b) / 100);
          for (const r of split) {
            // 24 connections spread at random leave a replica without one once in 1 / (2/3)^24, about 17,000 runs.
            expect(r.a + r.b, `${r.pod}'s calls`).toBeGreaterThan(0);
            expect(Math.abs(r.a - 0.7 * (r.a + r.b)), r.pod).toBeLessThanOrEqual(3);
          }
        } else {
          await k(['patch', 'hpa', GATEWAY_NAME, '-n', NS, '--type=merge', '-p', JSON.stringify({ spec: { minReplicas: 3 } })]);
          await k(['wait', '--for=jsonpath={.status.readyReplicas}=3', '--timeout=120s', '-n', NS, deployment]);
          rounds.push(`cycle ${cycle}: out to 3 by minReplicas in ${seconds(scaling)} s`);
        }
        // At three replicas a drain may take one; at two, still one (maxUnavailable 1, not a minAvailable).
        expect(await pdb(3)).toEqual({ expectedPods: 3, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 });

        // The scale-down: the ReplicaSet picks one of the three; each is watched until the others are known to stay.
        const old = await runningPods(GATEWAY);
        const giveUp = new AbortController();
        const ending = old.map((p) =>
          awaitTermination(plane.kubeconfigPath, NS, p.metadata.name, 'gateway', 300_000, giveUp.signal).then((t) => ({ ...t, cycle, pod: p.metadata.name })),
        );
        const settled = Promise.allSettled(ending);
        const calm = Date.now();
        const autoscaler = sampleAutoscaler(k, 15_000);
        if (cycle > 1) await k(['patch', 'hpa', GATEWAY_NAME, '-n', NS, '--type=merge', '-p', JSON.stringify({ spec: { minReplicas: AUTOSCALING.minReplicas } })]);
        const ended = await Promise.any(ending).catch((err: unknown) => {
          throw new Error(`no gateway pod ended; what the HPA saw meanwhile:\n${autoscaler.stop().join('\n')}`, { cause: err });
        });
        const down = seconds(calm);
        console.log(`[chart] cycle ${cycle}, what the HPA saw until the scale-down:\n${autoscaler.stop().join('\n')}`);
        await k(['wait', '--for=jsonpath={.status.replicas}=2', '--timeout=60s', '-n', NS, deployment]);
        giveUp.abort(new Error('not the pod the scale-down took'));
        const gone = (await settled).flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        expect(gone.map((t) => t.pod)).toEqual([ended.pod]);
        ends.push(...gone);
        rounds.push(`back to 2 ${down} s after the ${cycle === 1 ? "load's end" : 'minReplicas 2'} (${ended.pod} ended ${ended.seconds.toFixed(1)} s after its deletion, exit ${ended.exitCode} ${ended.reason})`);
        expect(await pdb(2)).toEqual({ expectedPods: 2, currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1 });
      }
      // A few more calls to the two replicas left, then the tallies.
      await new Promise((r) => setTimeout(r, 2_000));
      const tallies = await streams.stop();
      console.log(`[chart] scaling: ${rounds.join(' | ')}`);
      expectNoCallLost(`${SCALE_DOWNS} scale-down(s) of the gateway`, tallies, streams.maxCalls);
      expect(ends.filter((t) => t.exitCode !== 0 || t.seconds >= GRACE_SECONDS)).toEqual([]);
    } catch (err) {
      console.log(`[chart] metrics-server's log:\n${metrics.log.slice(-5_000)}`);
      for (const p of await pods(EXAMPLES_NS)) {
        const statuses = p.status.containerStatuses ?? [];
        console.log(`[chart] pod ${p.metadata.name}: ${JSON.stringify(statuses.map((c) => ({ name: c.name, restarts: c.restartCount, last: c.lastState })))}`);
        console.log((await kubectl(['logs', '-n', EXAMPLES_NS, p.metadata.name, '--all-containers', '--tail=60', '--timestamps'], { kubeconfig: plane.kubeconfigPath })).stdout);
      }
      throw err;
    } finally {
      await metrics.stop();
    }
  }, SCALING_TIMEOUT_MS);
});
