/**
 * A Helm release on a control plane of its own, for test/integration/deploy/helm-install.test.ts: the chart
 * registers admission webhooks (failurePolicy Fail) served by pods that never really run, which would refuse
 * every write of the shared cluster's other tests. The pods do "run": kwok's fast stages make them Running and
 * Ready on the simulated Nodes, so `helm install --wait` and the Deployment controller see a real rollout.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { startControlPlane, type ControlPlane } from '../../../dev/cluster/index.js';
import { DEFAULT_DEPLOY_VALUES } from '../../../src/deploy/values.js';
import { kubectl as kubectlOn } from '../../support/cluster.js';
import { REPO_ROOT } from '../../support/examples.js';
import { helmOn } from '../../support/helm.js';

const run = promisify(execFile);

export const CHART = join(REPO_ROOT, 'charts/endpoint-operator');
/** The operator's namespace at the chart's default values (the chart creates it). */
export const OPERATOR_NS = DEFAULT_DEPLOY_VALUES.namespace;
/** Where Helm keeps the release: not the namespace the chart itself creates, which Helm would then fail to adopt. */
export const RELEASE_NS = 'default';
export const RELEASE = 'endpoint-operator';
const HELM_TIMEOUT = '4m';

export interface K8sObject {
  metadata: { name: string; uid: string; deletionTimestamp?: string; labels?: Record<string, string>; annotations?: Record<string, string>; managedFields?: { manager: string; operation: string }[] };
  spec: Record<string, unknown> & { nodeName?: string; replicas?: number };
  status?: { conditions?: { type: string; status: string }[]; availableReplicas?: number; replicas?: number; disruptionsAllowed?: number };
}

export interface HelmCluster {
  readonly plane: ControlPlane;
  readonly work: string;
  helm(args: readonly string[]): Promise<string>;
  install(chart: string, extra?: readonly string[]): Promise<string>;
  upgrade(chart: string, extra?: readonly string[]): Promise<string>;
  kubectl(args: readonly string[], input?: string): Promise<string>;
  get(resource: string, name: string, namespace?: string): Promise<K8sObject>;
  list(resource: string, selector: string[]): Promise<K8sObject[]>;
  stop(): Promise<void>;
}

export async function startHelmCluster(helmBinary: string): Promise<HelmCluster> {
  const planeLog: string[] = [];
  const plane = await startControlPlane({ log: (line) => planeLog.push(line) });
  const work = await mkdtemp(join(tmpdir(), 'eo-helm-install-'));
  const kubectl = async (args: readonly string[], input?: string): Promise<string> => {
    const r = await kubectlOn(args, { kubeconfig: plane.kubeconfigPath, timeoutMs: 120_000, ...(input === undefined ? {} : { input }) });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  const helm = async (args: readonly string[]): Promise<string> => (await helmOn(helmBinary, plane.kubeconfigPath, args, 300_000)).stdout;
  const verb = (v: 'install' | 'upgrade') => (chart: string, extra: readonly string[] = []) => helm([v, RELEASE, chart, '--namespace', RELEASE_NS, '--wait', '--timeout', HELM_TIMEOUT, ...extra]);
  return {
    plane,
    work,
    helm,
    install: verb('install'),
    upgrade: verb('upgrade'),
    kubectl,
    get: async (resource, name, namespace) => JSON.parse(await kubectl(['get', resource, name, '-o', 'json', '--show-managed-fields', ...(namespace ? ['-n', namespace] : [])])) as K8sObject,
    list: async (resource, selector) => (JSON.parse(await kubectl(['get', resource, '-o', 'json', ...selector])) as { items: K8sObject[] }).items,
    stop: async () => {
      await plane.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
}

/** The chart 0.1.0 as released: its CRDs in crds/, which Helm installs once and never upgrades. */
export const PREVIOUS_CHART_COMMIT = '7fc7eab';

/** The chart as committed at PREVIOUS_CHART_COMMIT, extracted under `dir`; its path. */
export async function previousChart(dir: string): Promise<string> {
  try {
    await run('git', ['-C', REPO_ROOT, 'cat-file', '-e', `${PREVIOUS_CHART_COMMIT}^{commit}`]);
  } catch {
    throw new Error(`commit ${PREVIOUS_CHART_COMMIT} (chart 0.1.0, the version an upgrade starts from) is not in ${REPO_ROOT}: a shallow clone? Run git fetch --unshallow`);
  }
  const archive = join(dir, 'previous.tar');
  await run('git', ['-C', REPO_ROOT, 'archive', '--output', archive, PREVIOUS_CHART_COMMIT, 'charts/endpoint-operator']);
  await run('tar', ['-x', '-f', archive, '-C', dir]);
  return join(dir, 'charts/endpoint-operator');
}

/** A copy of `chart` under `dir` with `edit` applied to the text of its template `file` and the chart version set. */
export function editedChart(chart: string, dir: string, version: string, file: string, edit: (text: string) => string): string {
  const copy = join(dir, `chart-${version}`);
  cpSync(chart, copy, { recursive: true });
  const template = join(copy, 'templates', file);
  if (!existsSync(template)) throw new Error(`no template ${file} in ${chart}`);
  const before = readFileSync(template, 'utf8');
  const after = edit(before);
  if (after === before) throw new Error(`the edit changed nothing in ${file}`);
  writeFileSync(template, after);
  writeFileSync(join(copy, 'Chart.yaml'), yaml.dump({ ...(yaml.load(readFileSync(join(copy, 'Chart.yaml'), 'utf8')) as object), version }));
  return copy;
}

export function condition(obj: K8sObject, type: string): string | undefined {
  return obj.status?.conditions?.find((c) => c.type === type)?.status;
}
