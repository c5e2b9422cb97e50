/**
 * What `npm start` runs on the cluster: the CRDs (while its Nodes join), then the demo model servers, the gateway,
 * the operator and the examples, and the lines it prints. main.ts imports it while the cluster starts: these are the
 * product's modules, whose import takes seconds of a busy machine that the cluster's start leaves idle.
 */
import { mkdirSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { Agent } from 'undici';
import { DEFAULT_RESERVED_PREFIXES } from '../../src/api/common/kind.js';
import { DEFAULT_PROJECT_TEMPLATE } from '../../src/api/prediction/v1/names.js';
import { createLogger } from '../../src/base/logger.js';
import { collectProcessMetrics } from '../../src/base/metrics.js';
import { num, type FlagValues } from '../../src/cli/flags.js';
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
import { cacheRoot, type ControlPlane, type ModelHost } from '../cluster/index.js';
import { applyObject, DEV_FIELD_MANAGER, ensureNamespace } from './apply.js';
import { watchConvergence } from './convergence.js';
import {
  publishDemoBackends,
  startDemoBackends,
  stopDemoBackends,
  type DemoBackendPlan,
  type RunningDemoBackend,
} from './demo-backends.js';
import { demoCallerToken } from './demo-caller.js';
import { demoPassword, demoSecrets } from './demo-secrets.js';
import { LOOPBACK } from './flags.js';
import {
  devGatewayTlsDir,
  followGatewayCertificate,
  prepareGatewayCertificateFiles,
  type GatewayCertificateFiles,
} from './gateway-certificate-files.js';
import { clusterLines, gatewayLines, signinLines, type RunningEnvironment } from './instructions.js';
import { realNodeCatalogueConfigMap } from './real-node-model.js';
import { isReady } from './status-table.js';
import type { Teardown } from './teardown.js';

/** What main.ts decided and started: its options, the examples, the cluster and the real model's image. */
export interface OnClusterInput {
  readonly values: FlagValues;
  readonly namespace: string;
  readonly operatorNamespace: string;
  readonly examplesDir: string;
  readonly applyExamples: boolean;
  /** The examples, with the real model in them when there is one. */
  readonly objects: readonly KubeObject[];
  readonly demo: readonly DemoBackendPlan[];
  readonly demoPorts: readonly number[];
  readonly cluster: Cluster;
  readonly realModel: RealModel | undefined;
  readonly say: (line: string) => void;
}

export interface Cluster {
  readonly kubeconfig: string;
  readonly plane: ControlPlane | undefined;
  readonly modelHost: ModelHost | undefined;
}

export type RealModel = { readonly image: string; readonly expected: readonly number[] };

/**
 * Everything after the cluster: returns the lines to print once the examples are Ready (or the wait ended), or
 * undefined when `signal` aborted the wait.
 */
export async function serveOnCluster(
  c: OnClusterInput,
  signal: AbortSignal,
  teardown: Teardown,
): Promise<string[] | undefined> {
  const { say, cluster, realModel } = c;
  const logging = startLogging(teardown);
  const client = KubeClient.fromKubeconfig(cluster.kubeconfig);
  const demoBackends = await startDemoServers(c, teardown);
  const gateway = await startGateway(client, c, logging.log, teardown);
  const config = operatorConfig(c, gateway);
  const operator = await startOperator(client, config, logging, gateway, signal, teardown, say);
  const applyStarted = Date.now();
  const login = await applyTheExamples(client, c, demoBackends);
  const { rows, seconds } = await watchConvergence(client, c.namespace, num(c.values, 'wait'), signal, applyStarted);
  if (signal.aborted) return undefined;
  const notReady = rows.filter((r) => !isReady(r));
  say(
    notReady.length === 0
      ? `all ${rows.length} resources Ready ${seconds.toFixed(1)} s after the first apply`
      : `${notReady.length} of ${rows.length} resources not Ready after ${seconds.toFixed(0)} s`,
  );
  const ports = await operator.operator.ports;
  const env: RunningEnvironment = {
    client,
    namespace: c.namespace,
    kubeconfig: cluster.kubeconfig,
    plane: cluster.plane,
    objects: c.objects,
    operator: { metricsPort: ports.metrics, healthPort: ports.health },
    logFile: logging.logFile,
    signinUrl: operator.signin?.url,
    login,
    gateway: { url: gateway.url, caFile: gateway.files.caFile, client: gateway.client },
    // The gateway authenticates: the curls printed run as ServiceAccount demo-caller, with its token.
    token: await demoCallerToken(client, c.namespace),
    realModel,
    say,
  };
  return [...clusterLines(env), ...signinLines(env), ...(await gatewayLines(env))];
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

/** What the operator needs in the cluster before it starts; main.ts runs it while the cluster's Nodes join. */
export interface InstallInput {
  readonly namespace: string;
  readonly operatorNamespace: string;
  readonly realNode: boolean;
  readonly say: (line: string) => void;
}

/** The CRDs, the two namespaces, and with the real node the machine catalogue that places the real model on it. */
export async function installIntoCluster(kubeconfig: string, c: InstallInput): Promise<void> {
  const client = KubeClient.fromKubeconfig(kubeconfig);
  c.say('installing the CRDs');
  await installCrds(client, { fieldManager: DEV_FIELD_MANAGER });
  await ensureNamespace(client, c.operatorNamespace);
  await ensureNamespace(client, c.namespace);
  // Followed by the operator as under the chart.
  if (c.realNode) await applyObject(client, realNodeCatalogueConfigMap(c.operatorNamespace));
}

async function startDemoServers(c: OnClusterInput, teardown: Teardown): Promise<RunningDemoBackend[]> {
  const modelHost = c.cluster.modelHost;
  if (c.demo.length === 0 || modelHost === undefined) return [];
  const backends = await startDemoBackends(c.demo, c.demoPorts, modelHost);
  teardown.add('the demo model servers', () => stopDemoBackends(backends));
  for (const b of backends)
    c.say(
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
async function startGateway(client: KubeClient, c: OnClusterInput, log: Logger, teardown: Teardown): Promise<Gateway> {
  const { cluster, say } = c;
  const tls: GatewayTlsSettings = { ...DEFAULT_GATEWAY_TLS, namespace: c.operatorNamespace };
  const dir = devGatewayTlsDir(cluster.kubeconfig, c.operatorNamespace);
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
    namespaces: [c.namespace],
    listen: { host: LOOPBACK, port: num(c.values, 'gateway-port') },
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

function operatorConfig(c: OnClusterInput, gateway: Gateway): ProcessConfig {
  const webhookPort = num(c.values, 'webhook-port');
  return {
    operator: {
      project: DEFAULT_PROJECT_TEMPLATE,
      location: 'us-central1',
      gatewayUrl: gateway.url,
      workers: 4,
      reservedPrefixes: DEFAULT_RESERVED_PREFIXES,
      // One process in dev: no Lease to wait for after an earlier run was killed.
      leaderElection: { enabled: false, namespace: c.operatorNamespace, leaseName: 'endpoint-operator-leader' },
      healthPort: 0,
      metricsPort: 0,
      bindAddress: '127.0.0.1',
      // The chart's policy, so a containerSpec model gets it here too. It admits the gateway's pods, not this
      // process on the host; the local cluster runs no policy engine, so nothing enforces it (docs/local-cluster.md).
      modelNetworkPolicy: {
        gatewayNamespace: c.operatorNamespace,
        gatewayPodLabels: gatewaySelectorLabels(),
        extraIngressFrom: [],
      },
      machineCatalogueConfigMap: c.realModel !== undefined ? MACHINE_TYPES_CONFIGMAP : undefined,
    },
    webhook: {
      settings: localWebhookSettings(webhookPort, { namespace: c.operatorNamespace }),
      listen: { host: LOOPBACK, port: webhookPort },
    },
    signin: { namespace: c.namespace, host: '127.0.0.1', port: num(c.values, 'signin-port') },
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
  say: (line: string) => void,
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
  c: OnClusterInput,
  demoBackends: readonly RunningDemoBackend[],
): Promise<RunningEnvironment['login']> {
  if (!c.applyExamples) return undefined;
  const { objects } = c;
  const modelHost = c.cluster.modelHost;
  const password = demoPassword();
  const secrets = await demoSecrets(objects, password);
  await Promise.all(secrets.map((s) => applyObject(client, s.secret)));
  c.say(`applying ${objects.length} objects from ${c.examplesDir}`);
  // Namespaces first, then the rest at once, as a GitOps sync applies them: the operator takes its kinds in any
  // order, and one round trip after another cost seconds before the real model's pods could start.
  const isNamespace = (o: KubeObject): boolean => o.kind === 'Namespace';
  await Promise.all(objects.filter(isNamespace).map((o) => applyObject(client, o)));
  await Promise.all(objects.filter((o) => !isNamespace(o)).map((o) => applyObject(client, o)));
  // The demo servers are not Pods: their selector-less Services get EndpointSlices from us.
  if (modelHost !== undefined) await publishDemoBackends(client, demoBackends, modelHost.address);
  return { password, users: secrets.map((s) => ({ email: s.email, kind: s.kind })) };
}
