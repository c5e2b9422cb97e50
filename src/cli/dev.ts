import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';
import { allKinds } from '../api/kinds.js';
import { startControlPlane, cacheRoot, type ControlPlane } from '../devcluster/index.js';
import { applyObject, ensureNamespace, DEV_FIELD_MANAGER } from '../dev-environment/apply.js';
import { installCrds } from '../operator/crds.js';
import { demoPassword, demoSecrets } from '../dev-environment/demo-secrets.js';
import { defaultExamplesDir, loadExampleObjects } from '../dev-environment/examples.js';
import { isReady, renderStatusTable, statusRow, type StatusRow } from '../dev-environment/status-table.js';
import { startOperatorProcess, type ProcessConfig } from '../operator/process.js';
import { KubeClient, type KubeObject } from '../runtime/kube-client.js';
import { createLogger } from '../runtime/logger.js';
import { collectProcessMetrics } from '../runtime/metrics.js';
import { localWebhookSettings } from '../webhook/settings.js';
import { UsageError, bool, num, parseFlags, renderFlags, str, type FlagSpec } from './flags.js';

const DEV_FLAGS: readonly FlagSpec[] = [
  { name: 'kubeconfig', type: 'string', env: 'KUBECONFIG', placeholder: 'PATH', help: 'use this cluster instead of starting the local control plane' },
  { name: 'namespace', type: 'string', default: 'endpoint-demo', placeholder: 'NS', help: 'namespace of the examples and of the sign-in API' },
  { name: 'operator-namespace', type: 'string', default: 'endpoint-operator-system', placeholder: 'NS', help: "the operator's own namespace (webhook certificate Secret)" },
  { name: 'examples', type: 'string', placeholder: 'DIR', help: 'manifests to apply (default: examples/valid of this checkout)' },
  { name: 'apply-examples', type: 'boolean', default: true, help: 'apply the examples and create the demo users\' password Secrets' },
  { name: 'signin-port', type: 'number', default: 8443, placeholder: 'PORT', help: 'port of the sign-in API on 127.0.0.1 (0 = any free port)' },
  { name: 'wait', type: 'number', default: 120, placeholder: 'SECONDS', help: 'how long the live table waits for every resource to be Ready' },
];

const HELP = `Usage: endpoint-operator dev [flags]

The embedded default (what \`npm start\` runs): starts (or reuses, with --kubeconfig) a local control
plane, installs the CRDs and webhooks, runs the operator, webhooks and sign-in API in this process,
applies the examples, and shows every resource's Ready condition while they converge. Ctrl-C stops.

Flags:
${renderFlags(DEV_FLAGS)}
  --help                  show this help`;

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
async function watchConvergence(client: KubeClient, namespace: string, waitSeconds: number, signal: AbortSignal, started: number): Promise<{ rows: StatusRow[]; seconds: number }> {
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
  const logDir = join(cacheRoot(), 'dev');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, 'operator.log');
  const log = createLogger({}, pino.destination({ dest: logFile, sync: false }));
  // The /metrics it prints carries the process figures, as under `run`.
  collectProcessMetrics();
  let running: Awaited<ReturnType<typeof startOperatorProcess>> | undefined;
  try {
    if (kubeconfig === undefined) {
      say('starting the local control plane (etcd + kube-apiserver on loopback)');
      plane = await startControlPlane({ log: (line) => say(line) });
      kubeconfig = plane.kubeconfigPath;
    } else {
      say(`using the cluster of ${kubeconfig}`);
    }
    const client = KubeClient.fromKubeconfig(kubeconfig);
    say('installing the CRDs');
    await installCrds(client, { fieldManager: DEV_FIELD_MANAGER });
    await ensureNamespace(client, operatorNamespace);
    await ensureNamespace(client, namespace);

    const config: ProcessConfig = {
      operator: {
        project: 'endpoint-operator',
        location: 'us-central1',
        workers: 4,
        reservedPrefixes: DEFAULT_RESERVED_PREFIXES,
        // One process in dev: no Lease to wait for after an earlier run was killed.
        leaderElection: { enabled: false, namespace: operatorNamespace, leaseName: 'endpoint-operator-leader' },
        healthPort: 0,
        metricsPort: 0,
        bindAddress: '127.0.0.1',
      },
      webhook: { settings: localWebhookSettings(0, { namespace: operatorNamespace }), listen: { host: '127.0.0.1', port: 0 } },
      signin: { namespace, host: '127.0.0.1', port: num(values, 'signin-port') },
    };
    say(`starting the operator, webhooks and sign-in API (logs: ${logFile})`);
    running = await startOperatorProcess(client, config, log, stop.signal);
    const ports = await running.operator.ports;

    const applyStarted = Date.now();
    let password: string | undefined;
    let users: { email: string; kind: string }[] = [];
    if (bool(values, 'apply-examples')) {
      const dir = str(values, 'examples') ?? defaultExamplesDir();
      const objects: KubeObject[] = await loadExampleObjects(dir);
      password = demoPassword();
      const secrets = await demoSecrets(objects, password);
      users = secrets.map((s) => ({ email: s.email, kind: s.kind }));
      for (const s of secrets) await applyObject(client, s.secret);
      say(`applying ${objects.length} objects from ${dir}`);
      for (const obj of objects) await applyObject(client, obj);
    }
    const { rows, seconds } = await watchConvergence(client, namespace, num(values, 'wait'), stop.signal, applyStarted);
    const notReady = rows.filter((r) => !isReady(r));
    if (stop.signal.aborted) return 0;
    say(notReady.length === 0 ? `all ${rows.length} resources Ready ${seconds.toFixed(1)} s after the first apply` : `${notReady.length} of ${rows.length} resources not Ready after ${seconds.toFixed(0)} s`);

    const url = running.signin?.url;
    const shopUser = users.find((u) => u.kind === 'ShopUser');
    const lines = [
      '',
      'Point kubectl at it:',
      `  export KUBECONFIG=${kubeconfig}`,
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
    lines.push('', 'Press Ctrl-C to stop.');
    process.stdout.write(`${lines.join('\n')}\n`);
    if (!stop.signal.aborted) await new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }));
    return 0;
  } catch (err) {
    say(`failed: ${(err as Error).message}`);
    return 1;
  } finally {
    say('stopping');
    await running?.stop().catch((err: unknown) => say(`stopping the operator failed: ${(err as Error).message}`));
    await plane?.stop();
    log.flush();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    say('stopped');
  }
}
