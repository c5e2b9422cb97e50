/**
 * Callers of the gateway as a cluster makes them: ServiceAccounts (no controller-manager runs, so they
 * are created here; TokenRequest needs no token controller), RoleBindings to the shipped ClusterRoles,
 * and tokens minted by the TokenRequest API with the audiences asked for (Kubernetes 1.20's kubectl has
 * no `create token`: `kubectl create --raw .../serviceaccounts/NAME/token` is the same call).
 */
import yaml from 'js-yaml';
import { callerRoleManifests } from '../../../src/deploy/caller-roles.js';
import { kubectl } from '../../support/cluster.js';

async function run(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** The ClusterRoles of the chart (endpoint-operator-prediction-caller, -registry-reader, -metrics-reader). */
export async function applyCallerRoles(): Promise<void> {
  await run(['apply', '-f', '-'], callerRoleManifests().map((o) => yaml.dump(o)).join('---\n'));
}

export async function createServiceAccount(namespace: string, name: string): Promise<void> {
  await run(['create', 'serviceaccount', name, '-n', namespace]);
}

export async function deleteServiceAccount(namespace: string, name: string): Promise<void> {
  await run(['delete', 'serviceaccount', name, '-n', namespace, '--wait=true']);
}

/** A RoleBinding (namespaced grant) of a ClusterRole to a ServiceAccount. */
export async function bindRole(namespace: string, binding: string, clusterRole: string, serviceAccount: string): Promise<void> {
  await run(['create', 'rolebinding', binding, '-n', namespace, `--clusterrole=${clusterRole}`, `--serviceaccount=${namespace}:${serviceAccount}`]);
}

export async function bindClusterRole(binding: string, clusterRole: string, namespace: string, serviceAccount: string): Promise<void> {
  await run(['create', 'clusterrolebinding', binding, `--clusterrole=${clusterRole}`, `--serviceaccount=${namespace}:${serviceAccount}`]);
}

export async function unbind(namespace: string, binding: string): Promise<void> {
  await run(['delete', 'rolebinding', binding, '-n', namespace]);
}

/** A token for the ServiceAccount; `audiences` empty = the kube-apiserver's own audience. */
export async function mintToken(namespace: string, serviceAccount: string, audiences: readonly string[], expirationSeconds = 3600): Promise<string> {
  const request = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { ...(audiences.length > 0 ? { audiences } : {}), expirationSeconds } };
  const out = await run(['create', '--raw', `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, '-f', '-'], JSON.stringify(request));
  const token = (JSON.parse(out) as { status?: { token?: unknown } }).status?.token;
  if (typeof token !== 'string' || token === '') throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token: ${out.slice(0, 200)}`);
  return token;
}
