/** Shared by the reconciler integration tests: CRDs, an in-process operator per test, kubectl helpers. */
import yaml from 'js-yaml';
import { pino } from 'pino';
import {
  backendEndpointSlice,
  backendService,
  backendServiceRefs,
  hostedBackendFor,
} from '../../../dev/environment/backend-services.js';
import { ApiError } from '../../../src/kube/api-error.js';
import { loadClusterConnection } from '../../../src/kube/cluster-connection.js';
import { KubeClient, type PatchOptions } from '../../../src/kube/kube-client.js';
import type { KubeObject, ResourceRef } from '../../../src/api/common/kube-object.js';
import { installCrds as installProjectCrds } from '../../../src/operator/crds.js';
import { startOperator, type OperatorSettings, type RunningOperator } from '../../../src/operator/start.js';
import { loadExamples } from '../../support/examples.js';
import { kubectl, testCluster } from '../../support/cluster.js';

export function testClient(): KubeClient {
  return KubeClient.fromKubeconfig(testCluster().kubeconfig);
}

export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
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
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The project's CRDs, installed as `dev` does; new ones point their conversion at a closed port (this suite runs no webhook). */
export async function installCrds(client: KubeClient): Promise<void> {
  await installProjectCrds(client, { crdOptions: { conversion: { url: 'https://127.0.0.1:9/convert' } } });
}

export interface TestOperator {
  readonly operator: RunningOperator;
  readonly client: KubeClient;
  stop(): Promise<void>;
}

export async function runOperator(namespace: string, overrides: Partial<OperatorSettings> = {}): Promise<TestOperator> {
  const client = testClient();
  const operator = await startOperator({
    client,
    settings: {
      project: '{namespace}',
      location: 'europe-west4',
      namespaces: [namespace],
      workers: 4,
      leaderElection: { enabled: false, namespace, leaseName: 'endpoint-operator' },
      ...overrides,
    },
    log: pino({ level: process.env['EO_TEST_OPERATOR_LOG'] ?? 'silent' }),
  });
  await operator.ready;
  return {
    operator,
    client,
    stop: async () => {
      await operator.stop();
      client.close();
    },
  };
}

/** The project's CRDs installed, then an operator watching `namespace`: how the reconciler and gateway suites start. */
export async function runOperatorWithCrds(
  namespace: string,
  overrides: Partial<OperatorSettings> = {},
): Promise<TestOperator> {
  const client = testClient();
  await installCrds(client);
  client.close();
  return runOperator(namespace, overrides);
}

/** The valid examples of an area as one YAML stream, every object moved to `namespace`. */
export function examplesIn(area: string, namespace: string): string {
  const docs = loadExamples('valid')
    .filter((f) => f.path.includes(`/${area}/`))
    .flatMap((f) => f.documents.map((d) => d.object))
    .map((o) => {
      const obj = structuredClone(o) as KubeObject;
      obj.metadata = { ...obj.metadata, namespace };
      return obj;
    });
  return docs.map((d) => yaml.dump(d)).join('---\n');
}

/**
 * Services and EndpointSlices (loopback, ready) for every backend Service the valid examples of
 * `area` name, as `dev` makes them: the examples' DeployedModels are Ready only when their model
 * servers have a ready endpoint. Nothing listens there: readiness is the slices', not a probe's.
 */
export async function exampleBackendsIn(area: string, namespace: string): Promise<string> {
  const objects = (yaml.loadAll(examplesIn(area, namespace)) as KubeObject[]).filter((o) => o !== null);
  return backendServiceRefs(objects)
    .map((ref, i) => hostedBackendFor(ref, testCluster().modelHost.address, 9 + i))
    .flatMap((b) => [backendService(b), backendEndpointSlice(b)])
    .map((o) => yaml.dump(o))
    .join('---\n');
}

export async function apply(namespace: string, manifest: string): Promise<void> {
  const r = await kubectl(['apply', '--validate=false', '-n', namespace, '-f', '-'], { input: manifest });
  if (r.code !== 0) throw new Error(`kubectl apply failed (${r.code}): ${r.stderr}`);
}

export async function getJson(
  namespace: string,
  resource: string,
): Promise<KubeObject & { status?: Record<string, unknown> }> {
  const r = await kubectl(['get', '-n', namespace, resource, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl get ${resource} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as KubeObject & { status?: Record<string, unknown> };
}

export async function waitReady(namespace: string, resources: string, timeoutSeconds = 60): Promise<void> {
  const r = await kubectl(
    ['wait', '-n', namespace, '--for=condition=Ready', `--timeout=${timeoutSeconds}s`, ...resources.split(/\s+/)],
    { timeoutMs: (timeoutSeconds + 10) * 1000 },
  );
  if (r.code !== 0) throw new Error(`kubectl wait --for=condition=Ready ${resources} failed: ${r.stderr}${r.stdout}`);
}

export function readyOf(obj: {
  status?: Record<string, unknown>;
}): { status?: string; reason?: string; message?: string; observedGeneration?: number } | undefined {
  const conditions = obj.status?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  return (conditions as Array<Record<string, unknown>>).find((c) => c.type === 'Ready') as ReturnType<typeof readyOf>;
}

/**
 * A real client that counts the status writes it sends and can be told to disturb them: fail
 * them for some objects (an API error the reconciler must survive) or let another writer change
 * the object first (a 409 Conflict the status writer must retry).
 */
export class InstrumentedClient extends KubeClient {
  statusPatches = 0;
  failStatusFor: (name: string) => boolean = () => false;
  /** Fails patches of the object itself (finalizers), not of its status, with `objectPatchFailure`. */
  failObjectPatchFor: (name: string) => boolean = () => false;
  /** 500 is retried with backoff; 403 is terminal. */
  objectPatchFailure: 403 | 500 = 500;
  /** Object (not status) patches attempted, per object name, refused ones included. */
  readonly objectPatchAttempts = new Map<string, number>();
  beforeStatusPatch: ((namespace: string | undefined, name: string) => Promise<void>) | undefined;

  static forTestCluster(): InstrumentedClient {
    return new InstrumentedClient(loadClusterConnection({ path: testCluster().kubeconfig }));
  }

  override async patch<T = KubeObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    opts: PatchOptions,
  ): Promise<T> {
    if (opts.subresource === 'status') {
      if (this.failStatusFor(name)) throw new ApiError(500, 'InternalError', `injected failure for ${name}`, {});
      const before = this.beforeStatusPatch;
      if (before) {
        this.beforeStatusPatch = undefined;
        await before(namespace, name);
      }
      const result = await super.patch<T>(ref, namespace, name, patch, opts);
      this.statusPatches++;
      return result;
    }
    this.objectPatchAttempts.set(name, (this.objectPatchAttempts.get(name) ?? 0) + 1);
    if (this.failObjectPatchFor(name)) {
      throw this.objectPatchFailure === 403
        ? new ApiError(403, 'Forbidden', `injected refusal for ${name}`, {})
        : new ApiError(500, 'InternalError', `injected failure for ${name}`, {});
    }
    return super.patch<T>(ref, namespace, name, patch, opts);
  }
}

export async function runOperatorWith(
  client: KubeClient,
  namespace: string,
  overrides: Partial<OperatorSettings> = {},
): Promise<RunningOperator> {
  const operator = await startOperator({
    client,
    settings: {
      project: '{namespace}',
      location: 'europe-west4',
      namespaces: [namespace],
      workers: 4,
      leaderElection: { enabled: false, namespace, leaseName: 'endpoint-operator' },
      ...overrides,
    },
    log: pino({ level: process.env['EO_TEST_OPERATOR_LOG'] ?? 'silent' }),
  });
  return operator;
}
