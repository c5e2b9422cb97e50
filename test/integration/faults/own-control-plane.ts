/**
 * Shared by the fault tests that break the control plane itself (kube-apiserver restart, etcd compaction
 * behind a stopped apiserver): the run's shared control plane cannot be restarted from a test file, so each
 * such file starts its own, installs the CRDs, and runs the operator in-process against it with its log
 * lines captured, so a test can prove which recovery path ran.
 */
import type { ControlPlane } from '../../../dev/cluster/index.js';
import { startControlPlane } from '../../../dev/cluster/index.js';
import { installCrds } from '../../../src/operator/crds.js';
import { startOperator, type RunningOperator } from '../../../src/operator/start.js';
import { resources } from '../../../src/api/kind-bindings.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import type { KubeObject, ResourceRef } from '../../../src/api/common/kube-object.js';
import { createLogger } from '../../../src/base/logger.js';

export { resources };

export interface FaultCluster {
  readonly plane: ControlPlane;
  readonly client: KubeClient;
  readonly namespace: string;
  /** The control plane's own progress lines, for a failure message. */
  readonly planeLog: readonly string[];
  stop(): Promise<void>;
}

const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };

/** A fresh etcd + kube-apiserver (watch cache off, so compaction means 410), the project's CRDs and a namespace. */
export async function startFaultCluster(namespace: string): Promise<FaultCluster> {
  const planeLog: string[] = [];
  const plane = await startControlPlane({ log: (line) => planeLog.push(line) });
  const client = KubeClient.fromKubeconfig(plane.kubeconfigPath, { requestTimeoutMs: 10_000 });
  const stop = async (): Promise<void> => {
    client.close();
    await plane.stop();
  };
  try {
    // No webhook runs here: new CRDs point their conversion at a closed port, and the tests use v1 only.
    await installCrds(client, { crdOptions: { conversion: { url: 'https://127.0.0.1:9/convert' } } });
    await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  } catch (err) {
    await stop();
    throw err;
  }
  return { plane, client, namespace, planeLog, stop };
}

export type LogRecord = Record<string, unknown> & { msg?: string; level?: string; informer?: string };

export interface OperatorUnderTest {
  readonly operator: RunningOperator;
  /** Every line the operator logged (debug and up), parsed. */
  readonly logs: LogRecord[];
  /** GET of the operator's own health server (`/healthz`, `/readyz`, `/metrics`). */
  health(path: string): Promise<{ status: number; body: string }>;
  /** Set once `done` resolved on its own: the operator stopped without being asked to. */
  readonly exitedEarly: () => string | undefined;
  stop(): Promise<void>;
}

/** The operator as `run` assembles it (defaults for backoff and watch timeouts), on its own client. */
export async function startOperatorUnderTest(plane: ControlPlane, namespace: string): Promise<OperatorUnderTest> {
  const logs: LogRecord[] = [];
  const log = createLogger(
    { level: 'debug' },
    { write: (line: string) => void logs.push(JSON.parse(line) as LogRecord) },
  );
  const client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
  const operator = await startOperator({
    client,
    settings: {
      project: 'demo-project',
      location: 'europe-west4',
      namespaces: [namespace],
      workers: 2,
      leaderElection: { enabled: false, namespace, leaseName: 'endpoint-operator' },
      healthPort: 0,
      bindAddress: '127.0.0.1',
    },
    log,
  });
  let stopping = false;
  let exited: string | undefined;
  void operator.done.then((why) => {
    if (!stopping) exited = why;
  });
  const ports = await operator.ports;
  await operator.ready;
  return {
    operator,
    logs,
    health: async (path) => {
      const res = await fetch(`http://127.0.0.1:${ports.health ?? 0}${path}`, { signal: AbortSignal.timeout(5_000) });
      return { status: res.status, body: await res.text() };
    },
    exitedEarly: () => exited,
    stop: async () => {
      stopping = true;
      await operator.stop();
      client.close();
    },
  };
}

/** Polls `check` every 100 ms until it returns something other than undefined/false; the last thrown error is in the timeout message. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError !== undefined ? `: ${String(lastError)}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

type Status = {
  observedGeneration?: number;
  conditions?: { type: string; status: string; reason?: string; observedGeneration?: number }[];
} & Record<string, unknown>;
export type Observed = KubeObject & { status?: Status };

/** Ready=True for the object's current generation: the operator has seen and reconciled this very spec. */
export function readyAndCurrent(obj: Observed | undefined): boolean {
  const ready = obj?.status?.conditions?.find((c) => c.type === 'Ready');
  return (
    ready?.status === 'True' &&
    ready.observedGeneration === obj?.metadata.generation &&
    obj?.status?.observedGeneration === obj?.metadata.generation
  );
}

/** The ids listed in a PredictionEndpoint's status.deployedModels. */
export function deployedIds(endpoint: Observed | undefined): string[] {
  const models = endpoint?.status?.['deployedModels'];
  return Array.isArray(models) ? models.map((m: { id?: unknown }) => String(m.id)) : [];
}

/** `endpoint:port` of each entry of a RegistryService's status.endpoints (the last segment of its resource name). */
export function listedEndpoints(service: Observed | undefined): string[] {
  const endpoints = service?.status?.['endpoints'];
  return Array.isArray(endpoints)
    ? endpoints.map(
        (e: { name?: unknown; port?: unknown }) => `${String(e.name).split('/').at(-1) ?? ''}:${String(e.port)}`,
      )
    : [];
}

const PREDICTION = 'prediction.endpoint-operator.dev/v1';
const REGISTRY = 'registry.endpoint-operator.dev/v1';
export const SERVICE_NAME = 'projects/demo-project/locations/europe-west4/namespaces/shop/services/checkout';

export function predictionEndpoint(name: string, trafficSplit: Record<string, number>): KubeObject {
  return {
    apiVersion: PREDICTION,
    kind: 'PredictionEndpoint',
    metadata: { name },
    spec: { displayName: name, trafficSplit },
  };
}

export function deployedModel(name: string, endpoint: string, id: string): KubeObject {
  return {
    apiVersion: PREDICTION,
    kind: 'DeployedModel',
    metadata: { name },
    spec: {
      endpointRef: { name: endpoint },
      id,
      model: `projects/p/locations/l/models/${name}`,
      automaticResources: { minReplicaCount: 1 },
    },
  };
}

export function registryService(name: string): KubeObject {
  return { apiVersion: REGISTRY, kind: 'RegistryService', metadata: { name }, spec: { name: SERVICE_NAME } };
}

export function registryEndpoint(name: string, address: string, port: number): KubeObject {
  return {
    apiVersion: REGISTRY,
    kind: 'RegistryEndpoint',
    metadata: { name },
    spec: { name: `${SERVICE_NAME}/endpoints/${name}`, address, port },
  };
}

/**
 * etcd's v3 JSON gateway (keys and values base64), for changing the cluster's storage behind the apiserver's
 * back: what a watch can then only learn from a relist.
 */
export class EtcdGateway {
  constructor(private readonly endpoint: string) {}

  /** The key kube-apiserver stores a custom resource under (no `--etcd-prefix` given: `/registry`). */
  static keyOf(ref: ResourceRef, namespace: string, name: string): string {
    return `/registry/${ref.group}/${ref.plural}/${namespace}/${name}`;
  }

  async keys(prefix: string): Promise<string[]> {
    const body = await this.call<{ kvs?: { key: string }[] }>('range', {
      key: b64(prefix),
      range_end: b64(prefixEnd(prefix)),
      keys_only: true,
    });
    return (body.kvs ?? []).map((kv) => unb64(kv.key));
  }

  async get(key: string): Promise<string | undefined> {
    const body = await this.call<{ kvs?: { value?: string }[] }>('range', { key: b64(key) });
    const value = body.kvs?.[0]?.value;
    return value === undefined ? undefined : unb64(value);
  }

  async put(key: string, value: string): Promise<void> {
    await this.call('put', { key: b64(key), value: b64(value) });
  }

  /** Returns how many keys were deleted. */
  async delete(key: string): Promise<number> {
    const body = await this.call<{ deleted?: string }>('deleterange', { key: b64(key) });
    return Number(body.deleted ?? 0);
  }

  /** Compacts (physically) to the current revision, which it returns: every older revision is gone. */
  async compact(): Promise<number> {
    const header = await this.call<{ header?: { revision?: string } }>('range', {
      key: b64('/'),
      keys_only: true,
      limit: 1,
    });
    const revision = Number(header.header?.revision);
    if (!Number.isSafeInteger(revision) || revision <= 0)
      throw new Error(`etcd answered no revision: ${JSON.stringify(header)}`);
    await this.call('compaction', { revision: String(revision), physical: true });
    return revision;
  }

  private async call<T>(op: string, body: unknown): Promise<T> {
    const res = await fetch(`${this.endpoint}/v3/kv/${op}`, {
      method: 'POST',
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`etcd ${op}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }
}

function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

function unb64(s: string): string {
  return Buffer.from(s, 'base64').toString('utf8');
}

/** etcd's range_end for "every key with this prefix": the prefix with its last byte incremented. */
function prefixEnd(prefix: string): string {
  const bytes = Buffer.from(prefix, 'utf8');
  const last = bytes.length - 1;
  bytes[last] = (bytes[last] ?? 0) + 1;
  return bytes.toString('utf8');
}
