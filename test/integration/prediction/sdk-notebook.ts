/**
 * Shared by the tests of Vertex's write API on the real node: the real-node plane with the gateway authenticating
 * callers (TokenReview, SubjectAccessReview as the caller), the iris model pushed to the local registry as the OCI
 * artifacts `gs://demo-models/iris/1` and `/2` name through the bucket map, and callers as a cluster makes them
 * (ServiceAccounts bound to the shipped ClusterRoles, tokens from the TokenRequest API). A caller runs the Python
 * SDK in a notebook, one cell at a time, a kernel per caller and transport (test/support/python/vertex_sdk_notebook.py),
 * and reads the objects with kubectl.
 */
import { join } from 'node:path';
import yaml from 'js-yaml';
import { irisArtifactBucket, pushIrisArtifact } from '../../../dev/models/iris-artifact.js';
import { ensureIrisModel } from '../../../dev/models/iris-model.js';
import { ensurePythonPackages } from '../../../dev/models/python-packages.js';
import { DEFAULT_AUDIENCE, DEFAULT_AUTH_SETTINGS } from '../../../src/gateway/auth/settings.js';
import { MODEL_DEPLOYER_ROLE, PREDICTION_CALLER_ROLE } from '../../../src/gateway/auth/attributes.js';
import {
  applyCallerRoles,
  bindRole,
  createServiceAccount,
  mintToken,
  useCluster,
} from '../../support/service-accounts.js';
import type { NotebookKernel } from '../../support/vertex-sdk.js';
import { manifests, startRealNodeServing, type RealNodeServing } from './real-node-serving.js';

/** The operator's location here; the project is the namespace (the project template `{namespace}`). */
export const LOCATION = 'europe-west4';
/** The real node's machine type in the catalogue. */
export const MACHINE_TYPE = 'e2-small';

export interface Caller {
  /** The Kubernetes user the gateway authenticates (`system:serviceaccount:NS:NAME`). */
  readonly user: string;
  /** The field manager its writes carry: `vertex-api/<user>`. */
  readonly manager: string;
  readonly token: string;
}

export interface Notebooks extends RealNodeServing {
  readonly project: string;
  /** One notebook cell of `caller` over `transport`: the SDK's answer (or its error: {error, code, message}). */
  cell(
    caller: Caller,
    transport: 'grpc' | 'rest',
    step: string,
    args?: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
  /** A ServiceAccount of the namespace bound to `roles` (ClusterRoles, by RoleBindings), and its token. */
  caller(name: string, roles: readonly string[]): Promise<Caller>;
  /** The object as `kubectl get -o yaml --show-managed-fields` prints it; undefined when it is not found. */
  object(resource: string): Promise<KubeYaml | undefined>;
}

export interface KubeYaml {
  metadata: {
    name: string;
    annotations?: Record<string, string>;
    managedFields?: { manager: string; operation: string }[];
  };
  spec?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- read field by field
  status?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- read field by field
}

/** The roles a data scientist who uploads, deploys and predicts is given. */
export const DATA_SCIENTIST_ROLES = [MODEL_DEPLOYER_ROLE, PREDICTION_CALLER_ROLE] as const;

/** The annotation naming the user who wrote an object through the API. */
export const WRITTEN_BY = 'endpoint-operator.dev/written-by';

export async function startNotebooks(namespace: string, name: string): Promise<Notebooks> {
  const s = await startRealNodeServing(namespace, { ...DEFAULT_AUTH_SETTINGS }, name);
  try {
    const logFile = join(s.plane.dataDir, 'logs', 'iris-artifacts.log');
    const modelDir = await ensureIrisModel(await ensurePythonPackages('mlserver'));
    await pushIrisArtifact(modelDir, '1', logFile);
    await pushIrisArtifact(modelDir, '2', logFile);
    const bucket = await s.k(['apply', '-f', '-'], manifests(irisArtifactBucket()));
    if (bucket.code !== 0) throw new Error(`kubectl apply of the bucket map: ${bucket.stderr}`);
    useCluster(s.plane.kubeconfigPath);
    await applyCallerRoles();
  } catch (err) {
    await s.stop();
    throw err;
  }
  const project = namespace;
  const kernels = new Map<string, NotebookKernel>();
  const kernelOf = (caller: Caller, transport: string): NotebookKernel => {
    const key = `${caller.user} ${transport}`;
    const kernel = kernels.get(key) ?? s.notebookKernel(caller.token);
    kernels.set(key, kernel);
    return kernel;
  };
  return {
    ...s,
    project,
    cell: (caller, transport, step, args = {}) =>
      kernelOf(caller, transport).run(step, { project, location: LOCATION, transport, ...args }, 900_000),
    stop: async () => {
      await Promise.all([...kernels.values()].map((k) => k.close()));
      await s.stop();
    },
    caller: async (account, roles) => {
      await createServiceAccount(namespace, account);
      for (const role of roles) await bindRole(namespace, `${account}-${role}`, role, account);
      const user = `system:serviceaccount:${namespace}:${account}`;
      return { user, manager: `vertex-api/${user}`, token: await mintToken(namespace, account, [DEFAULT_AUDIENCE]) };
    },
    object: async (resource) => {
      const r = await s.k(['get', resource, '-o', 'yaml', '--show-managed-fields']);
      if (r.code !== 0 && /NotFound|not found/.test(r.stderr)) return undefined;
      if (r.code !== 0) throw new Error(`kubectl get ${resource}: ${r.stderr}`);
      return yaml.load(r.stdout) as KubeYaml;
    },
  };
}

/** The managers of an object's fields, as `kubectl get --show-managed-fields` lists them. */
export function managersOf(obj: KubeYaml | undefined): string[] {
  return (obj?.metadata.managedFields ?? []).map((f) => f.manager);
}

/** The last segment of a Vertex resource name (`projects/p/locations/l/endpoints/123` → `123`). */
export function idOf(resourceName: unknown): string {
  return String(resourceName).split('/').at(-1) ?? '';
}
