import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pino } from 'pino';
import { Agent } from 'undici';
import { watchServingCertificate } from '../gateway/tls/serving-certificate.js';
import { GATEWAY_CA_CONFIGMAP } from '../operator/gateway-ca-configmaps.js';
import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';
import { allKinds } from '../api/kinds.js';
import { DEFAULT_PROJECT_TEMPLATE } from '../api/prediction/v1/names.js';
import { startControlPlane, cacheRoot, type ControlPlane, type ModelHost } from '../devcluster/index.js';
import { capture } from '../devcluster/exec.js';
import { createModelHost, removeModelHost } from '../devcluster/network.js';
import { applyObject, ensureNamespace, DEV_FIELD_MANAGER } from '../dev-environment/apply.js';
import { installCrds } from '../operator/crds.js';
import { demoPassword, demoSecrets } from '../dev-environment/demo-secrets.js';
import { defaultExamplesDir, loadExampleObjects } from '../dev-environment/examples.js';
import { kubeconfigOnCommandLine, stoppedDevCluster } from '../dev-environment/stopped-cluster.js';
import { portProblems, type PlannedPort } from '../dev-environment/port-check.js';
import {
  callableEndpoint,
  CURL_GATEWAY_OPTIONS,
  curlLines,
  DEMO_INSTANCE,
  listEndpoints,
  sampleSplit,
  tryCall,
} from '../dev-environment/demo-calls.js';
import {
  demoBackendPlan,
  publishDemoBackends,
  startDemoBackends,
  stopDemoBackends,
  type RunningDemoBackend,
} from '../dev-environment/demo-backends.js';
import { GatewayServer } from '../gateway/server.js';
import { demoResolveCall, registryLookupLines } from '../dev-environment/registry-lines.js';
import { servingLines } from '../dev-environment/serving-lines.js';
import { isReady, renderStatusTable, statusRow, type StatusRow } from '../dev-environment/status-table.js';
import { startOperatorProcess, type ProcessConfig } from '../operator/process.js';
import { DEFAULT_GATEWAY_TLS, type GatewayTlsSettings } from '../operator/gateway-certificate.js';
import {
  devGatewayTlsDir,
  followGatewayCertificate,
  prepareGatewayCertificateFiles,
} from '../dev-environment/gateway-certificate-files.js';
import { KubeClient, type KubeObject } from '../kube/kube-client.js';
import { createLogger } from '../runtime/logger.js';
import { collectProcessMetrics } from '../runtime/metrics.js';
import { startTelemetry } from '../runtime/telemetry.js';
import { localWebhookSettings } from '../webhook/settings.js';
import { UsageError, bool, list, num, parseFlags, renderFlags, str, type FlagSpec, type FlagValues } from './flags.js';
import { DEFAULT_AUTH_SETTINGS } from '../gateway/auth/settings.js';
import { gatewaySelectorLabels } from '../deploy/values.js';
import { demoCallerLines, demoCallerToken } from '../dev-environment/demo-caller.js';
import {
  buildRealModelImage,
  callRealModel,
  pushRealModelImage,
  realModelEndpoint,
  realModelLines,
  realNodeCatalogueConfigMap,
  withRealModel,
} from '../dev-environment/real-node-model.js';
import { MACHINE_TYPES_CONFIGMAP } from '../deploy/machine-types.js';

const DEV_FLAGS: readonly FlagSpec[] = [
  {
    name: 'kubeconfig',
    type: 'string',
    env: 'KUBECONFIG',
    placeholder: 'PATH',
    help: 'use this cluster instead of starting the local Kubernetes cluster',
  },
  {
    name: 'real-node',
    type: 'boolean',
    default: false,
    help: "add one real node (kubelet + containerd, with a local image registry) beside the kwok Nodes, where the examples' containerSpec model runs as a real model server (iris, Google's Vertex ModelServer); one per machine (docs/local-cluster.md)",
  },
  {
    name: 'namespace',
    type: 'string',
    default: 'endpoint-demo',
    placeholder: 'NS',
    help: 'namespace of the examples and of the sign-in API',
  },
  {
    name: 'operator-namespace',
    type: 'string',
    default: 'endpoint-operator-system',
    placeholder: 'NS',
    help: "the operator's own namespace (webhook certificate Secret)",
  },
  {
    name: 'examples',
    type: 'string',
    placeholder: 'DIR',
    help: 'manifests to apply (default: examples/valid of this checkout)',
  },
  {
    name: 'apply-examples',
    type: 'boolean',
    default: true,
    help: "apply the examples and create the demo users' password Secrets",
  },
  {
    name: 'signin-port',
    type: 'number',
    default: 8443,
    placeholder: 'PORT',
    help: 'port of the sign-in API on 127.0.0.1 (0 = any free port)',
  },
  {
    name: 'webhook-port',
    type: 'number',
    default: 0,
    placeholder: 'PORT',
    help: 'port of the admission and conversion webhooks on 127.0.0.1 (0 = any free port)',
  },
  {
    name: 'gateway-port',
    type: 'number',
    default: 8090,
    placeholder: 'PORT',
    help: 'port of the prediction gateway on 127.0.0.1 (0 = any free port)',
  },
  {
    name: 'model-ports',
    type: 'list',
    default: ['8701', '8702'],
    placeholder: 'PORT[,PORT]',
    help: "ports of the demo model servers in the model host's network namespace, one per backend Service of the examples' DeployedModels (0 = any free port)",
  },
  {
    name: 'wait',
    type: 'number',
    default: 120,
    placeholder: 'SECONDS',
    help: 'how long the live table waits for every resource to be Ready',
  },
];

const HELP = `Usage: endpoint-operator dev [flags]

The embedded default (what \`npm start\` runs): starts (or reuses, with --kubeconfig) a local Kubernetes
cluster with simulated nodes, installs the CRDs and webhooks, runs the operator, webhooks, sign-in API and
prediction gateway in this process, starts the demo model servers the examples' DeployedModels name in the
cluster's model host (a network namespace; with Services and EndpointSlices for them), applies the
examples, and shows every resource's Ready condition while they converge; then prints a working curl of
:predict. Every port is checked before anything starts. Ctrl-C stops. Needs root (the network namespace).

Flags:
${renderFlags(DEV_FLAGS)}
  --help                  show this help`;

const LOOPBACK = '127.0.0.1';

/** `--model-ports` as numbers, one per planned demo server (0 where the list is short). */
function modelPorts(values: FlagValues, count: number): number[] {
  const given = list(values, 'model-ports').map((p) => Number(p));
  const bad = given.find((p) => !Number.isInteger(p) || p < 0 || p > 65535);
  if (bad !== undefined) throw new UsageError(`--model-ports takes port numbers (0..65535), got ${String(bad)}`);
  return Array.from({ length: count }, (_, i) => given[i] ?? 0);
}

/** The ports `dev` opens on this machine's loopback, each with the flag that moves it (the demo model servers' are in their own namespace). */
function plannedPorts(values: FlagValues): PlannedPort[] {
  return [
    { what: 'the sign-in API', host: LOOPBACK, port: num(values, 'signin-port'), flag: '--signin-port' },
    { what: 'the webhooks', host: LOOPBACK, port: num(values, 'webhook-port'), flag: '--webhook-port' },
    { what: 'the prediction gateway', host: LOOPBACK, port: num(values, 'gateway-port'), flag: '--gateway-port' },
  ];
}

function say(line: string): void {
  process.stderr.write(`dev: ${line}\n`);
}

async function listRows(client: KubeClient, namespace: string): Promise<StatusRow[]> {
  const rows: StatusRow[] = [];
  for (const def of allKinds) {
    if (def.kind === 'SignInSession') continue;
    const version = def.versions.find((v) => v.storage)?.name ?? 'v1';
    const list = await client.list({ group: def.group, version, plural: def.plural, namespaced: true }, namespace);
    rows.push(...list.items.map((o) => statusRow({ ...o, kind: def.kind })));
  }
  return rows;
}

/** Shows the table until every resource is Ready (or the wait ends); redraws in place on a terminal. */
async function watchConvergence(
  client: KubeClient,
  namespace: string,
  waitSeconds: number,
  signal: AbortSignal,
  started: number,
): Promise<{ rows: StatusRow[]; seconds: number }> {
  const tty = process.stdout.isTTY === true;
  let drawn = 0;
  let last = '';
  let rows: StatusRow[] = [];
  while (!signal.aborted) {
    rows = await listRows(client, namespace).catch(() => rows);
    const table = renderStatusTable(rows);
    const elapsed = (Date.now() - started) / 1000;
    const ready = rows.filter(isReady).length;
    const text = `${table}\n${ready}/${rows.length} Ready after ${elapsed.toFixed(0)} s`;
    if (tty) {
      process.stdout.write(`${drawn > 0 ? `\x1b[${drawn}F\x1b[J` : ''}${text}\n`);
      drawn = text.split('\n').length;
    } else if (table !== last) {
      process.stdout.write(`${text}\n\n`);
    }
    last = table;
    if ((rows.length > 0 && ready === rows.length) || elapsed >= waitSeconds) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { rows, seconds: (Date.now() - started) / 1000 };
}

export async function main(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseFlags(DEV_FLAGS, argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`endpoint-operator dev: ${err.message}\n\n${HELP}`);
    return 2;
  }
  if (values.help === true) {
    console.log(HELP);
    return 0;
  }
  const namespace = str(values, 'namespace') ?? 'endpoint-demo';
  const operatorNamespace = str(values, 'operator-namespace') ?? 'endpoint-operator-system';
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  let plane: ControlPlane | undefined;
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
  const logDir = join(cacheRoot(), 'dev');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, 'operator.log');
  const log = createLogger({}, pino.destination({ dest: logFile, sync: false }));
  // The /metrics it prints carries the process figures, as under `run`.
  collectProcessMetrics();
  // Traces as `run` and `gateway` send them when the OTEL_* environment asks: the gateway here continues the
  // caller's trace and exports its spans (one process, so one service name).
  const telemetry = startTelemetry('endpoint-operator', process.env, log);
  let running: Awaited<ReturnType<typeof startOperatorProcess>> | undefined;
  let gateway: GatewayServer | undefined;
  let demoBackends: RunningDemoBackend[] = [];
  let ownModelHost: ModelHost | undefined;
  let gatewayTlsDir: string | undefined;
  try {
    const applyExamples = bool(values, 'apply-examples');
    const examplesDir = str(values, 'examples') ?? defaultExamplesDir();
    let objects: KubeObject[] = applyExamples ? await loadExampleObjects(examplesDir) : [];
    const realNode = bool(values, 'real-node') && kubeconfig === undefined;
    // The real model's image is built (the first time: minutes) while the cluster starts; awaited after it.
    const realModelImage = realNode
      ? buildRealModelImage(say).then(
          (built) => ({ built }),
          (err: unknown) => ({ failed: err as Error }),
        )
      : undefined;
    const demo = demoBackendPlan(objects);
    // Every port this process opens, checked before the control plane is built and started.
    const problems = await portProblems(plannedPorts(values));
    const demoPorts = modelPorts(values, demo.length);
    if (problems.length > 0) {
      for (const p of problems) say(p);
      return 2;
    }
    let modelHost: ModelHost | undefined;
    if (kubeconfig === undefined) {
      say(
        'starting the local Kubernetes cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler; Nodes simulated by kwok)',
      );
      plane = await startControlPlane({
        log: (line) => say(line),
        realNode,
        // A fresh cluster on every start: its controllers start without waiting on their client's rate limit.
        unthrottledControllerManager: true,
      });
      kubeconfig = plane.kubeconfigPath;
      modelHost = plane.modelHost;
      const version = await capture(plane.kubectl, ['--kubeconfig', kubeconfig, 'version']);
      say(`kubectl version:\n  ${version.stdout.trim().split('\n').join('\n  ')}`);
    } else {
      say(`using the cluster of ${kubeconfig}`);
      if (demo.length > 0) modelHost = ownModelHost = await createModelHost(randomBytes(4).toString('hex'));
    }
    let realModel: { image: string; expected: readonly number[] } | undefined;
    if (realModelImage !== undefined) {
      const result = await realModelImage;
      if ('failed' in result) throw result.failed;
      const image = await pushRealModelImage(result.built.local);
      say(`real model server image ${image} in the node's registry`);
      realModel = { image, expected: result.built.expected };
      objects = withRealModel(objects, image);
    }
    const client = KubeClient.fromKubeconfig(kubeconfig);
    say('installing the CRDs');
    await installCrds(client, { fieldManager: DEV_FIELD_MANAGER });
    await ensureNamespace(client, operatorNamespace);
    await ensureNamespace(client, namespace);
    // The catalogue that places the real model on the real node, followed by the operator as under the chart.
    if (realModel !== undefined) await applyObject(client, realNodeCatalogueConfigMap(operatorNamespace));

    if (demo.length > 0 && modelHost !== undefined) {
      demoBackends = await startDemoBackends(demo, demoPorts, modelHost);
      for (const b of demoBackends)
        say(
          `demo model server ${b.server.url} in network namespace ${modelHost.netns} (${b.protocol}, model ${b.modelName}, fraud model ${b.version}) behind Service ${b.ref.namespace}/${b.ref.name}`,
        );
    }
    // The gateway's certificate, issued into its Secret as under `run` and written as files the in-process
    // gateway reads as a pod reads the mounted Secret; the operator process below renews it and rewrites them.
    const gatewayTls: GatewayTlsSettings = { ...DEFAULT_GATEWAY_TLS, namespace: operatorNamespace };
    const gatewayFiles = await prepareGatewayCertificateFiles(
      client,
      gatewayTls,
      (gatewayTlsDir = devGatewayTlsDir(kubeconfig, operatorNamespace)),
    );
    say(`gateway certificate in ${gatewayFiles.dir} (CA ${gatewayFiles.caFile})`);
    // The data plane in this process, as `endpoint-operator gateway` would run it (stateless: no lease), serving
    // TLS from the certificate files as a pod serves the mounted Secret, and following their renewals.
    const certificate = await watchServingCertificate({
      certFile: gatewayFiles.certFile,
      keyFile: gatewayFiles.keyFile,
      log: log.child({ component: 'gateway' }),
    });
    gateway = await GatewayServer.create({
      client,
      namespaces: [namespace],
      listen: { host: LOOPBACK, port: num(values, 'gateway-port') },
      log: log.child({ component: 'gateway' }),
      auth: DEFAULT_AUTH_SETTINGS,
      tls: certificate.current(),
    });
    const tlsGateway = gateway;
    certificate.onChange((pair) => tlsGateway.setCertificate(pair));
    stop.signal.addEventListener('abort', () => void certificate.close(), { once: true });
    const gatewayPort = (await gateway.start()).port;
    // `localhost`: a name the certificate holds, which every client resolves to this loopback port.
    const gatewayUrl = `https://localhost:${gatewayPort}`;
    const gatewayClient = new Agent({ connect: { ca: await readFile(gatewayFiles.caFile, 'utf8') } });
    say(`prediction gateway on ${gatewayUrl} (REST and gRPC over TLS)`);

    const config: ProcessConfig = {
      operator: {
        project: DEFAULT_PROJECT_TEMPLATE,
        location: 'us-central1',
        gatewayUrl,
        workers: 4,
        reservedPrefixes: DEFAULT_RESERVED_PREFIXES,
        // One process in dev: no Lease to wait for after an earlier run was killed.
        leaderElection: { enabled: false, namespace: operatorNamespace, leaseName: 'endpoint-operator-leader' },
        healthPort: 0,
        metricsPort: 0,
        bindAddress: '127.0.0.1',
        // The chart's policy, so a containerSpec model gets it here too. It admits the gateway's pods, not this
        // process on the host; the local cluster runs no policy engine, so nothing enforces it (docs/local-cluster.md).
        modelNetworkPolicy: {
          gatewayNamespace: operatorNamespace,
          gatewayPodLabels: gatewaySelectorLabels(),
          extraIngressFrom: [],
        },
        machineCatalogueConfigMap: realModel !== undefined ? MACHINE_TYPES_CONFIGMAP : undefined,
      },
      webhook: {
        settings: localWebhookSettings(num(values, 'webhook-port'), { namespace: operatorNamespace }),
        listen: { host: LOOPBACK, port: num(values, 'webhook-port') },
      },
      signin: { namespace, host: '127.0.0.1', port: num(values, 'signin-port') },
      gatewayTls,
    };
    say(`starting the operator, webhooks and sign-in API (logs: ${logFile})`);
    running = await startOperatorProcess(client, config, log, stop.signal);
    if (running.gatewayCertificate) followGatewayCertificate(running.gatewayCertificate, gatewayFiles);
    const ports = await running.operator.ports;

    const applyStarted = Date.now();
    let password: string | undefined;
    let users: { email: string; kind: string }[] = [];
    if (applyExamples) {
      password = demoPassword();
      const secrets = await demoSecrets(objects, password);
      users = secrets.map((s) => ({ email: s.email, kind: s.kind }));
      for (const s of secrets) await applyObject(client, s.secret);
      say(`applying ${objects.length} objects from ${examplesDir}`);
      for (const obj of objects) await applyObject(client, obj);
      // The demo servers are not Pods: their selector-less Services get EndpointSlices from us.
      if (modelHost !== undefined) await publishDemoBackends(client, demoBackends, modelHost.address);
    }
    const { rows, seconds } = await watchConvergence(client, namespace, num(values, 'wait'), stop.signal, applyStarted);
    const notReady = rows.filter((r) => !isReady(r));
    if (stop.signal.aborted) return 0;
    say(
      notReady.length === 0
        ? `all ${rows.length} resources Ready ${seconds.toFixed(1)} s after the first apply`
        : `${notReady.length} of ${rows.length} resources not Ready after ${seconds.toFixed(0)} s`,
    );

    const url = running.signin?.url;
    const shopUser = users.find((u) => u.kind === 'ShopUser');
    const lines = [
      '',
      'Point kubectl at it:',
      `  export KUBECONFIG=${kubeconfig}`,
      ...(plane !== undefined
        ? [`  export PATH=${dirname(plane.kubectl)}:$PATH   # kubectl ${plane.version}, built with the cluster`]
        : []),
      `  kubectl get endpoint-operator -n ${namespace}`,
      `  kubectl get pe,dm,registryservices,registryendpoints -n ${namespace}`,
      '',
      `Operator: metrics http://127.0.0.1:${ports.metrics ?? '?'}/metrics, health http://127.0.0.1:${ports.health ?? '?'}/readyz, logs ${logFile}`,
    ];
    if (url) {
      lines.push('', `Sign-in API: ${url} (OpenAPI: ${url}/openapi.json)`);
      if (password && shopUser) {
        lines.push(
          `Demo users (${users.map((u) => u.email).join(', ')}) have the password: ${password}`,
          '',
          `  curl -s -X POST ${url}/auth/pos/login -H 'content-type: application/json' \\`,
          `    -d '{"email":"${shopUser.email}","password":"${password}"}'`,
        );
      }
    }
    // The gateway authenticates: the curls below run as ServiceAccount demo-caller, with its token.
    const token = await demoCallerToken(client, namespace);
    lines.push(...demoCallerLines(namespace, token));
    lines.push(
      '',
      `The gateway's certificate is issued by the operator's CA (in every namespace as ConfigMap ${GATEWAY_CA_CONFIGMAP}):`,
      `  export GATEWAY_CA=${gatewayFiles.caFile}`,
    );
    const callable = callableEndpoint(await listEndpoints(client, namespace));
    if (callable !== undefined) {
      // Proven before it is printed: ten calls through the gateway, counted by the model that answered, and an :explain.
      const counts = await sampleSplit(callable.url, 10, token, gatewayClient);
      const seen = [...counts].map(([id, n]) => `${n} × ${id}`).join(', ');
      const explained = await tryCall(`${callable.url}:explain`, { instances: [DEMO_INSTANCE] }, token, gatewayClient);
      lines.push(
        '',
        `Prediction gateway: ${gatewayUrl} (PredictionEndpoint ${callable.name}: split ${JSON.stringify(callable.split)}; 10 calls just now: ${seen}; :explain answered ${explained})`,
        ...curlLines(callable.url, true),
      );
    } else {
      lines.push(
        '',
        `Prediction gateway: ${gatewayUrl} (no endpoint with a split over ready models yet: kubectl get pe,dm -n ${namespace})`,
      );
    }
    const models = await client.list(
      { group: 'prediction.endpoint-operator.dev', version: 'v1', plural: 'deployedmodels', namespaced: true },
      namespace,
    );
    lines.push(...servingLines(models.items, realModel !== undefined));
    const target = realModel && realModelEndpoint(await listEndpoints(client, namespace), models.items);
    if (realModel !== undefined && target !== undefined) {
      const answer = await callRealModel(target.url, token, gatewayClient);
      lines.push(...realModelLines(target, realModel.image, answer, realModel.expected));
    }
    const resolveCall = demoResolveCall(gatewayUrl, objects);
    if (resolveCall !== undefined)
      say(
        `resolve of ${resolveCall.name} as ${namespace}/demo-caller answered ${await tryCall(resolveCall.url, resolveCall.body, token, gatewayClient)}`,
      );
    lines.push(...registryLookupLines(gatewayUrl, objects, namespace, CURL_GATEWAY_OPTIONS));
    lines.push('', 'Press Ctrl-C to stop.');
    process.stdout.write(`${lines.join('\n')}\n`);
    if (!stop.signal.aborted)
      await new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }));
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`endpoint-operator dev: ${err.message}\n\n${HELP}`);
      return 2;
    }
    say(`failed: ${(err as Error).message}`);
    return 1;
  } finally {
    say('stopping');
    await gateway?.close().catch((err: unknown) => say(`stopping the gateway failed: ${(err as Error).message}`));
    await stopDemoBackends(demoBackends);
    await running?.stop().catch((err: unknown) => say(`stopping the operator failed: ${(err as Error).message}`));
    await telemetry?.shutdown().catch((err: unknown) => say(`stopping telemetry failed: ${(err as Error).message}`));
    await plane?.stop();
    // The certificate of a cluster that is gone is of no use to anyone.
    if (plane !== undefined && gatewayTlsDir !== undefined) await rm(gatewayTlsDir, { recursive: true, force: true });
    if (ownModelHost !== undefined) await removeModelHost(ownModelHost);
    log.flush();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    say('stopped');
  }
}
