/**
 * Callers of the gateway as a cluster makes them: ServiceAccounts, RoleBindings to the shipped ClusterRoles,
 * and tokens minted by the TokenRequest API (`kubectl create token`) with the audiences asked for.
 */
import { spawn } from 'node:child_process';
import yaml from 'js-yaml';
import { callerRoleManifests } from '../../src/deploy/caller-roles.js';
import { testCluster } from './cluster.js';

/** The real kubectl against `kubeconfig` (default: the run's shared cluster); throws on a non-zero exit. */
function kubectlAt(kubeconfig: string | undefined, args: string[], input = ''): Promise<string> {
  const cluster = testCluster();
  return new Promise((resolve, reject) => {
    const child = spawn(cluster.kubectl, ['--kubeconfig', kubeconfig ?? cluster.kubeconfig, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`kubectl ${args.join(' ')} failed (${code}): ${stderr.trim()}`)),
    );
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** Set by useCluster: the kubeconfig of a test's own control plane. */
let current: string | undefined;

/** Points these helpers at another control plane (a fault test's own); undefined = the shared one. */
export function useCluster(kubeconfig: string | undefined): void {
  current = kubeconfig;
}

function run(args: string[], input?: string): Promise<string> {
  return kubectlAt(current, args, input);
}

/** The ClusterRoles of the chart (endpoint-operator-prediction-caller, -registry-reader, -metrics-reader). */
export async function applyCallerRoles(): Promise<void> {
  await run(
    ['apply', '-f', '-'],
    callerRoleManifests()
      .map((o) => yaml.dump(o))
      .join('---\n'),
  );
}

export async function createServiceAccount(namespace: string, name: string): Promise<void> {
  await run(['create', 'serviceaccount', name, '-n', namespace]);
}

export async function deleteServiceAccount(namespace: string, name: string): Promise<void> {
  await run(['delete', 'serviceaccount', name, '-n', namespace, '--wait=true']);
}

/** A RoleBinding (namespaced grant) of a ClusterRole to a ServiceAccount. */
export async function bindRole(
  namespace: string,
  binding: string,
  clusterRole: string,
  serviceAccount: string,
): Promise<void> {
  await run([
    'create',
    'rolebinding',
    binding,
    '-n',
    namespace,
    `--clusterrole=${clusterRole}`,
    `--serviceaccount=${namespace}:${serviceAccount}`,
  ]);
}

export async function bindClusterRole(
  binding: string,
  clusterRole: string,
  namespace: string,
  serviceAccount: string,
): Promise<void> {
  await run([
    'create',
    'clusterrolebinding',
    binding,
    `--clusterrole=${clusterRole}`,
    `--serviceaccount=${namespace}:${serviceAccount}`,
  ]);
}

export async function unbind(namespace: string, binding: string): Promise<void> {
  await run(['delete', 'rolebinding', binding, '-n', namespace]);
}

/** A token for the ServiceAccount; `audiences` empty = the kube-apiserver's own audience. */
export async function mintToken(
  namespace: string,
  serviceAccount: string,
  audiences: readonly string[],
  expirationSeconds = 3600,
): Promise<string> {
  const out = await run([
    'create',
    'token',
    serviceAccount,
    '-n',
    namespace,
    `--duration=${expirationSeconds}s`,
    ...audiences.map((a) => `--audience=${a}`),
  ]);
  const token = out.trim();
  if (token === '' || /\s/.test(token))
    throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token: ${out.slice(0, 200)}`);
  return token;
}
