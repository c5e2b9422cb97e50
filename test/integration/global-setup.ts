/**
 * Vitest global setup of the `integration` project: ONE real cluster (etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler and kwok's simulated Nodes) for the
 * whole run, always torn down afterwards (vitest calls the returned teardown also when tests failed; the
 * control plane's watchdog covers a killed vitest). Test files get the connection through inject(), see
 * test/support/cluster.ts. With EO_TEST_KUBECONFIG set, that cluster is used and nothing is started.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import type { TestProject } from 'vitest/node';
import { randomBytes } from 'node:crypto';
import { ensureClusterBinaries, startControlPlane, type ModelHost } from '../../dev/cluster/index.js';
import { createModelHost, removeModelHost } from '../../dev/cluster/network.js';

export interface TestClusterInfo {
  /** Path of a kubeconfig whose current context is the test cluster's admin. */
  readonly kubeconfig: string;
  /** https://127.0.0.1:PORT */
  readonly server: string;
  /** The admin bearer token (group system:masters). */
  readonly token: string;
  /** http://127.0.0.1:PORT of etcd, '' when an external cluster (EO_TEST_KUBECONFIG) is used. */
  readonly etcdEndpoint: string;
  /** PEM file of the apiserver's CA ('' when an external kubeconfig names none). */
  readonly caFile: string;
  /** The kubectl executable tests run: the one built with the cluster's release. */
  readonly kubectl: string;
  /** Where the tests' model servers listen, so the cluster's EndpointSlices can name them (dev/cluster/network.ts). */
  readonly modelHost: ModelHost;
  /** The Kubernetes release, e.g. v1.37.2 (of the kubectl, for an external cluster). */
  readonly version: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    eoTestCluster: TestClusterInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string): void => console.error(`[control plane] ${line}`);
  const external = process.env['EO_TEST_KUBECONFIG'];
  if (external !== undefined && external !== '') {
    const bins = await ensureClusterBinaries(undefined, log);
    const { info, tempDir } = await fromKubeconfig(external);
    const modelHost = await createModelHost(randomBytes(4).toString('hex'));
    project.provide('eoTestCluster', { ...info, kubectl: bins.kubectl, modelHost, version: bins.release.version });
    return async () => {
      await removeModelHost(modelHost);
      if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
    };
  }
  const plane = await startControlPlane({ log });
  try {
    project.provide('eoTestCluster', {
      kubeconfig: plane.kubeconfigPath,
      server: plane.server,
      token: plane.adminToken,
      etcdEndpoint: plane.etcdEndpoint,
      caFile: plane.caFile,
      kubectl: plane.kubectl,
      modelHost: plane.modelHost,
      version: plane.version,
    });
  } catch (err) {
    await plane.stop();
    throw err;
  }
  return () => plane.stop();
}

/** Reads server, token and CA file of the current context of an existing kubeconfig (EO_TEST_KUBECONFIG). */
async function fromKubeconfig(
  path: string,
): Promise<{ info: Omit<TestClusterInfo, 'kubectl' | 'modelHost' | 'version'>; tempDir?: string }> {
  const doc: unknown = load(await readFile(path, 'utf8'));
  const current = field(doc, 'current-context');
  const context = field(named(field(doc, 'contexts'), current), 'context');
  const cluster = field(named(field(doc, 'clusters'), field(context, 'cluster')), 'cluster');
  const user = field(named(field(doc, 'users'), field(context, 'user')), 'user');
  const server = field(cluster, 'server');
  if (typeof server !== 'string')
    throw new Error(
      `EO_TEST_KUBECONFIG=${path}: the current context "${String(current)}" names no cluster with a server`,
    );
  const token = field(user, 'token');
  const caPath = field(cluster, 'certificate-authority');
  const caData = field(cluster, 'certificate-authority-data');
  let caFile = typeof caPath === 'string' ? caPath : '';
  let tempDir: string | undefined;
  if (caFile === '' && typeof caData === 'string') {
    // Tests that talk HTTPS themselves need the CA as a file.
    tempDir = await mkdtemp(join(tmpdir(), 'eo-test-ca-'));
    caFile = join(tempDir, 'ca.crt');
    await writeFile(caFile, Buffer.from(caData, 'base64'));
  }
  const info = {
    kubeconfig: path,
    server,
    token: typeof token === 'string' ? token : '',
    etcdEndpoint: process.env['EO_TEST_ETCD_ENDPOINT'] ?? '',
    caFile,
  };
  return tempDir === undefined ? { info } : { info, tempDir };
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/** The entry `{ name, ... }` of a kubeconfig list with this name. */
function named(list: unknown, name: unknown): unknown {
  return Array.isArray(list) ? list.find((entry: unknown) => field(entry, 'name') === name) : undefined;
}
