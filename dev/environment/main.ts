/**
 * `endpoint-operator-dev start`, what `npm start` runs: each step below is one named function, called in order by
 * `main`; each registers how to stop what it started (teardown.ts).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { Agent } from 'undici';
import { DEFAULT_RESERVED_PREFIXES } from '../../src/api/common/kind.js';
import { DEFAULT_PROJECT_TEMPLATE } from '../../src/api/prediction/v1/names.js';
import { createLogger } from '../../src/base/logger.js';
import { collectProcessMetrics } from '../../src/base/metrics.js';
import { UsageError, bool, num, str, type FlagValues } from '../../src/cli/flags.js';
import { MACHINE_TYPES_CONFIGMAP } from '../../src/deploy/machine-types.js';
import { gatewaySelectorLabels } from '../../src/deploy/values.js';
import { DEFAULT_AUTH_SETTINGS } from '../../src/gateway/auth/settings.js';
import { GatewayServer } from '../../src/gateway/server.js';
import { watchServingCertificate } from '../../src/gateway/tls/serving-certificate.js';
import { KubeClient, type KubeObject } from '../../src/kube/kube-client.js';
import { installCrds } from '../../src/operator/crds.js';
import { DEFAULT_GATEWAY_TLS, type GatewayTlsSettings } from '../../src/operator/gateway-certificate.js';
import { startOperatorProcess, type ProcessConfig, type RunningProcess } from '../../src/operator/process.js';
import { startTelemetry } from '../../src/runtime/telemetry.js';
import { localWebhookSettings } from '../../src/webhook/settings.js';
import { cacheRoot, startControlPlane, type ControlPlane, type ModelHost } from '../cluster/index.js';
import { createModelHost, removeModelHost } from '../cluster/network.js';
import { capture } from '../host/exec.js';
import { applyObject, DEV_FIELD_MANAGER, ensureNamespace } from './apply.js';
import { watchConvergence } from './convergence.js';
import {
  demoBackendPlan,
  publishDemoBackends,
  startDemoBackends,
  stopDemoBackends,
  type DemoBackendPlan,
  type RunningDemoBackend,
} from './demo-backends.js';
import { demoCallerToken } from './demo-caller.js';
import { demoPassword, demoSecrets } from './demo-secrets.js';
import { defaultExamplesDir, loadExampleObjects } from './examples.js';
import { HELP, LOOPBACK, modelPorts, parseDevFlags, plannedPorts } from './flags.js';
import {
  devGatewayTlsDir,
  followGatewayCertificate,
  prepareGatewayCertificateFiles,
  type GatewayCertificateFiles,
} from './gateway-certificate-files.js';
import { clusterLines, gatewayLines, signinLines, type RunningEnvironment } from './instructions.js';
import { nodesForThisMachine } from './node-choice.js';
import { portProblems } from './port-check.js';
import { kubeconfigOnCommandLine, stoppedDevCluster } from './stopped-cluster.js';
import {
  buildRealModelImage,
  pushRealModelImage,
  realNodeCatalogueConfigMap,
  withRealModel,
} from './real-node-model.js';
import { isReady } from './status-table.js';
import { Teardown } from './teardown.js';

function say(line: string): void {
  process.stderr.write(`dev: ${line}\n`);
}

interface Options {
  readonly values: FlagValues;
  readonly namespace: string;
  readonly operatorNamespace: string;
  readonly kubeconfig: string | undefined;
  readonly examplesDir: string;
  readonly applyExamples: boolean;
  /** The real node (node-choice.ts), and how long to wait for another cluster to give it up. */
  readonly realNode: boolean;
  readonly realNodeWaitMs: number;
}

async function options(values: FlagValues, argv: readonly string[]): Promise<Options | number> {
  let kubeconfig = str(values, 'kubeconfig');
  const stopped = stoppedDevCluster({
    kubeconfig,
    fromCommandLine: kubeconfigOnCommandLine(argv),
    tmp: tmpdir(),
    exists: existsSync,
  });
  if (stopped !== undefined) {
    say(stopped);
    kubeconfig = undefined;
  }
  const nodes = await nodesForThisMachine(values, kubeconfig !== undefined, say);
  if (typeof nodes === 'number') return nodes;
  return {
    values,
    namespace: str(values, 'namespace') ?? 'endpoint-demo',
    operatorNamespace: str(values, 'operator-namespace') ?? 'endpoint-operator-system',
    kubeconfig,
    examplesDir: str(values, 'examples') ?? defaultExamplesDir(),
    applyExamples: bool(values, 'apply-examples'),
    realNode: nodes.kind === 'real',
    realNodeWaitMs: nodes.kind === 'real' ? nodes.waitMs : 0,
  };
}

/** The operator's log file, process metrics and the OTEL_* tracing, as under `run`. */
function startLogging(teardown: Teardown): { log: Logger; logFile: string } {
  const logDir = join(cacheRoot(), 'dev');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, 'operator.log');
  const log = createLogger({}, pino.destination({ dest: logFile, sync: false }));
  teardown.add('the log', () => log.flush());
  // The /metrics it prints carries the process figures, as under `run`.
  collectProcessMetrics();
  // Traces as `run` and `gateway` send them when the OTEL_* environment asks: the gateway here continues the
  // caller's trace and exports its spans (one process, so one service name).
  const telemetry = startTelemetry('endpoint-operator', process.env, log);
  if (telemetry !== undefined) teardown.add('telemetry', () => telemetry.shutdown());
  return { log, logFile };
}

interface Plan {
  readonly objects: KubeObject[];
  readonly demo: DemoBackendPlan[];
  readonly demoPorts: number[];
  /** The real model's image, built (the first time: minutes) while the cluster starts. */
  readonly realModelImage: Promise<{ built: { local: string; expected: number[] } } | { failed: Error }> | undefined;
}

async function plan(opts: Options): Promise<Plan> {
  const objects = opts.applyExamples ? await loadExampleObjects(opts.examplesDir) : [];
  const realModelImage = opts.realNode
    ? buildRealModelImage(say).then(
        (built) => ({ built }),
        (err: unknown) => ({ failed: err as Error }),
      )
    : undefined;
  const demo = demoBackendPlan(objects);
  return { objects, demo, demoPorts: modelPorts(opts.values, demo.length), realModelImage };
}

interface Cluster {
  readonly kubeconfig: string;
  readonly plane: ControlPlane | undefined;
  readonly modelHost: ModelHost | undefined;
}

/** The local cluster (or the one --kubeconfig names, with a model host of our own for the demo servers). */
async function startCluster(opts: Options, run: Plan, teardown: Teardown): Promise<Cluster> {
  if (opts.kubeconfig !== undefined) {
    say(`using the cluster of ${opts.kubeconfig}`);
    if (run.demo.length === 0) return { kubeconfig: opts.kubeconfig, plane: undefined, modelHost: undefined };
    const modelHost = await createModelHost(randomBytes(4).toString('hex'));
    teardown.add('the model host', () => removeModelHost(modelHost));
    return { kubeconfig: opts.kubeconfig, plane: undefined, modelHost };
  }
  say(
    `starting the local Kubernetes cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler; ${opts.realNode ? 'one real node (kubelet + containerd) beside Nodes simulated by kwok' : 'Nodes simulated by kwok'})`,
  );
  const plane = await startControlPlane({
    log: say,
    realNode: opts.realNode,
    realNodeWaitMs: opts.realNodeWaitMs,
    // The model's image, pulled and unpacked once, stays on the node for the next start.
    keepNodeImages: true,
    // A fresh cluster on every start: its controllers start without waiting on their client's rate limit.
    unthrottledControllerManager: true,
  });
  teardown.add('the cluster', () => plane.stop());
  const version = await capture(plane.kubectl, ['--kubeconfig', plane.kubeconfigPath, 'version']);
  say(`kubectl version:\n  ${version.stdout.trim().split('\n').join('\n  ')}`);
  return { kubeconfig: plane.kubeconfigPath, plane, modelHost: plane.modelHost };
}

type RealModel = { readonly image: string; readonly expected: readonly number[] };

/** The real model's image in the node's registry, once built. */
async function pushRealModel(run: Plan): Promise<RealModel | undefined> {
  if (run.realModelImage === undefined) return undefined;
  const result = await run.realModelImage;
  if ('failed' in result) throw result.failed;
  const image = await pushRealModelImage(result.built.local);
  say(`real model server image ${image} in the node's registry`);
  return { image, expected: result.built.expected };
}

async function installIntoCluster(client: KubeClient, opts: Options, realModel: RealModel | undefined): Promise<void> {
  say('installing the CRDs');
  await installCrds(client, { fieldManager: DEV_FIELD_MANAGER });
  await ensureNamespace(client, opts.operatorNamespace);
  await ensureNamespace(client, opts.namespace);
  // The catalogue that places the real model on the real node, followed by the operator as under the chart.
  if (realModel !== undefined) await applyObject(client, realNodeCatalogueConfigMap(opts.operatorNamespace));
}

async function startDemoServers(
  run: Plan,
  modelHost: ModelHost | undefined,
  teardown: Teardown,
): Promise<RunningDemoBackend[]> {
  if (run.demo.length === 0 || modelHost === undefined) return [];
  const backends = await startDemoBackends(run.demo, run.demoPorts, modelHost);
  teardown.add('the demo model servers', () => stopDemoBackends(backends));
  for (const b of backends)
    say(
      `demo model server ${b.server.url} in network namespace ${modelHost.netns} (${b.protocol}, model ${b.modelName}, fraud model ${b.version}) behind Service ${b.ref.namespace}/${b.ref.name}`,
    );
  return backends;
}

interface Gateway {
  readonly url: string;
  readonly client: Agent;
  readonly tls: GatewayTlsSettings;
  readonly files: GatewayCertificateFiles;
}

/**
 * The data plane in this process, as `endpoint-operator gateway` would run it (stateless: no lease), serving TLS
 * from the certificate files as a pod serves the mounted Secret, and following their renewals. The certificate is
 * issued into its Secret as under `run`; the operator process renews it and rewrites the files.
 */
async function startGateway(
  client: KubeClient,
  cluster: Cluster,
  opts: Options,
  log: Logger,
  teardown: Teardown,
): Promise<Gateway> {
  const tls: GatewayTlsSettings = { ...DEFAULT_GATEWAY_TLS, namespace: opts.operatorNamespace };
  const dir = devGatewayTlsDir(cluster.kubeconfig, opts.operatorNamespace);
  // The certificate of a cluster that is gone is of no use to anyone.
  if (cluster.plane !== undefined)
    teardown.add('the gateway certificate files', () => rm(dir, { recursive: true, force: true }));
  const files = await prepareGatewayCertificateFiles(client, tls, dir);
  say(`gateway certificate in ${files.dir} (CA ${files.caFile})`);
  const certificate = await watchServingCertificate({
    certFile: files.certFile,
    keyFile: files.keyFile,
    log: log.child({ component: 'gateway' }),
  });
  teardown.add('the certificate watch', () => certificate.close());
  const gateway = await GatewayServer.create({
    client,
    namespaces: [opts.namespace],
    listen: { host: LOOPBACK, port: num(opts.values, 'gateway-port') },
    log: log.child({ component: 'gateway' }),
    auth: DEFAULT_AUTH_SETTINGS,
    tls: certificate.current(),
  });
  certificate.onChange((pair) => gateway.setCertificate(pair));
  teardown.add('the gateway', () => gateway.close());
  const port = (await gateway.start()).port;
  // `localhost`: a name the certificate holds, which every client resolves to this loopback port.
  const url = `https://localhost:${port}`;
  say(`prediction gateway on ${url} (REST and gRPC over TLS)`);
  return { url, client: new Agent({ connect: { ca: await readFile(files.caFile, 'utf8') } }), tls, files };
}

function operatorConfig(opts: Options, gateway: Gateway, realModel: RealModel | undefined): ProcessConfig {
  const webhookPort = num(opts.values, 'webhook-port');
  return {
    operator: {
      project: DEFAULT_PROJECT_TEMPLATE,
      location: 'us-central1',
      gatewayUrl: gateway.url,
      workers: 4,
      reservedPrefixes: DEFAULT_RESERVED_PREFIXES,
      // One process in dev: no Lease to wait for after an earlier run was killed.
      leaderElection: { enabled: false, namespace: opts.operatorNamespace, leaseName: 'endpoint-operator-leader' },
      healthPort: 0,
      metricsPort: 0,
      bindAddress: '127.0.0.1',
      // The chart's policy, so a containerSpec model gets it here too. It admits the gateway's pods, not this
      // process on the host; the local cluster runs no policy engine, so nothing enforces it (docs/local-cluster.md).
      modelNetworkPolicy: {
        gatewayNamespace: opts.operatorNamespace,
        gatewayPodLabels: gatewaySelectorLabels(),
        extraIngressFrom: [],
      },
      machineCatalogueConfigMap: realModel !== undefined ? MACHINE_TYPES_CONFIGMAP : undefined,
    },
    webhook: {
      settings: localWebhookSettings(webhookPort, { namespace: opts.operatorNamespace }),
      listen: { host: LOOPBACK, port: webhookPort },
    },
    signin: { namespace: opts.namespace, host: '127.0.0.1', port: num(opts.values, 'signin-port') },
    gatewayTls: gateway.tls,
  };
}

async function startOperator(
  client: KubeClient,
  config: ProcessConfig,
  logging: { log: Logger; logFile: string },
  gateway: Gateway,
  signal: AbortSignal,
  teardown: Teardown,
): Promise<RunningProcess> {
  say(`starting the operator, webhooks and sign-in API (logs: ${logging.logFile})`);
  const running = await startOperatorProcess(client, config, logging.log, signal);
  teardown.add('the operator', () => running.stop());
  if (running.gatewayCertificate) followGatewayCertificate(running.gatewayCertificate, gateway.files);
  return running;
}

/** The demo users' password Secrets, the examples, and the demo servers' EndpointSlices. */
async function applyTheExamples(
  client: KubeClient,
  opts: Options,
  objects: readonly KubeObject[],
  demoBackends: readonly RunningDemoBackend[],
  modelHost: ModelHost | undefined,
): Promise<RunningEnvironment['login']> {
  if (!opts.applyExamples) return undefined;
  const password = demoPassword();
  const secrets = await demoSecrets(objects, password);
  for (const s of secrets) await applyObject(client, s.secret);
  say(`applying ${objects.length} objects from ${opts.examplesDir}`);
  for (const obj of objects) await applyObject(client, obj);
  // The demo servers are not Pods: their selector-less Services get EndpointSlices from us.
  if (modelHost !== undefined) await publishDemoBackends(client, demoBackends, modelHost.address);
  return { password, users: secrets.map((s) => ({ email: s.email, kind: s.kind })) };
}

/** Aborted on SIGINT or SIGTERM (Ctrl-C), until `release`. */
function stopOnSignals(): { signal: AbortSignal; release(): void } {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: stop.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

export async function main(argv: string[]): Promise<number> {
  const values = parseDevFlags(argv);
  if (typeof values === 'number') return values;
  let opts: Options | number;
  try {
    opts = await options(values, argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`endpoint-operator-dev start: ${err.message}\n\n${HELP}`);
    return 2;
  }
  if (typeof opts === 'number') return opts;
  const stop = stopOnSignals();
  const teardown = new Teardown(say);
  try {
    const logging = startLogging(teardown);
    // Every port this process opens, checked before the control plane is built and started.
    const problems = await portProblems(plannedPorts(values));
    if (problems.length > 0) {
      for (const p of problems) say(p);
      return 2;
    }
    const run = await plan(opts);
    const cluster = await startCluster(opts, run, teardown);
    const realModel = await pushRealModel(run);
    const objects = realModel !== undefined ? withRealModel(run.objects, realModel.image) : run.objects;
    const client = KubeClient.fromKubeconfig(cluster.kubeconfig);
    await installIntoCluster(client, opts, realModel);
    const demoBackends = await startDemoServers(run, cluster.modelHost, teardown);
    const gateway = await startGateway(client, cluster, opts, logging.log, teardown);
    const config = operatorConfig(opts, gateway, realModel);
    const operator = await startOperator(client, config, logging, gateway, stop.signal, teardown);
    const applyStarted = Date.now();
    const login = await applyTheExamples(client, opts, objects, demoBackends, cluster.modelHost);
    const { rows, seconds } = await watchConvergence(
      client,
      opts.namespace,
      num(values, 'wait'),
      stop.signal,
      applyStarted,
    );
    if (stop.signal.aborted) return 0;
    const notReady = rows.filter((r) => !isReady(r));
    say(
      notReady.length === 0
        ? `all ${rows.length} resources Ready ${seconds.toFixed(1)} s after the first apply`
        : `${notReady.length} of ${rows.length} resources not Ready after ${seconds.toFixed(0)} s`,
    );
    const ports = await operator.operator.ports;
    const env: RunningEnvironment = {
      client,
      namespace: opts.namespace,
      kubeconfig: cluster.kubeconfig,
      plane: cluster.plane,
      objects,
      operator: { metricsPort: ports.metrics, healthPort: ports.health },
      logFile: logging.logFile,
      signinUrl: operator.signin?.url,
      login,
      gateway: { url: gateway.url, caFile: gateway.files.caFile, client: gateway.client },
      // The gateway authenticates: the curls printed run as ServiceAccount demo-caller, with its token.
      token: await demoCallerToken(client, opts.namespace),
      realModel,
      say,
    };
    const lines = [
      ...clusterLines(env),
      ...signinLines(env),
      ...(await gatewayLines(env)),
      '',
      'Press Ctrl-C to stop.',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    await untilAborted(stop.signal);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`endpoint-operator-dev start: ${err.message}\n\n${HELP}`);
      return 2;
    }
    say(`failed: ${(err as Error).message}`);
    return 1;
  } finally {
    say('stopping');
    await teardown.run();
    stop.release();
    say('stopped');
  }
}
