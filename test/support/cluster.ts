/**
 * What integration tests use to reach the run's control plane (started once by
 * test/integration/global-setup.ts):
 *
 *   const { kubeconfig, server, token, etcdEndpoint } = testCluster();
 *   const ns = await createTestNamespace('prediction');
 *   const r = await kubectl(['apply', '-n', ns, '-f', '-'], { input: yaml });
 *   expect(r.code, r.stderr).toBe(0);
 *
 * Namespaces are never deleted: there is no kube-controller-manager, so a deleted namespace would stay
 * Terminating forever; the whole etcd goes away at the end of the run instead.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import type { TestClusterInfo } from '../integration/global-setup.js';

export type { TestClusterInfo };

/** Connection details of the run's cluster: kubeconfig path, https server URL, admin token, etcd URL. */
export function testCluster(): TestClusterInfo {
  return inject('eoTestCluster');
}

export interface KubectlResult {
  /** kubectl's exit code; 124 when it was killed after `timeoutMs`, as timeout(1) reports. */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the real kubectl against the test cluster (`--kubeconfig` is added); never throws on a non-zero exit. */
export function kubectl(
  args: readonly string[],
  opts: {
    input?: string;
    timeoutMs?: number;
    /** another cluster than the run's */ kubeconfig?: string;
    /** another kubectl than the run's (outside vitest, e.g. a bench: then `kubeconfig` too) */ kubectl?: string;
  } = {},
): Promise<KubectlResult> {
  // Asked of vitest only when needed, so a bench passing both runs without it.
  const binary = opts.kubectl ?? testCluster().kubectl;
  const kubeconfig = opts.kubeconfig ?? testCluster().kubeconfig;
  return new Promise((resolve) => {
    const child = spawn(binary, ['--kubeconfig', kubeconfig, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 60_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: `${stderr}${err.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut)
        resolve({
          code: 124,
          stdout,
          stderr: `${stderr}\nkubectl ${args.join(' ')}: killed after ${opts.timeoutMs ?? 60_000} ms`,
        });
      else resolve({ code: code ?? 1, stdout, stderr });
    });
    // kubectl may exit before reading stdin (e.g. a bad flag); that EPIPE is not the test's failure.
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

/** Creates a namespace `<prefix>-<random>` (a valid DNS label), with its default ServiceAccount, and returns its name. */
export async function createTestNamespace(prefix: string): Promise<string> {
  const base =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 50) || 'test';
  const name = `${base}-${randomBytes(4).toString('hex')}`;
  const result = await kubectl(['create', 'namespace', name]);
  if (result.code !== 0)
    throw new Error(`kubectl create namespace ${name} failed (exit ${result.code}): ${result.stderr.trim()}`);
  // The controller-manager adds the namespace's default ServiceAccount a moment later, and a pod created before
  // it exists is refused (`serviceaccount "default" not found`).
  const account = await kubectl(['wait', '--for=create', 'serviceaccount/default', '-n', name, '--timeout=60s']);
  if (account.code !== 0) throw new Error(`namespace ${name} got no default ServiceAccount: ${account.stderr.trim()}`);
  return name;
}
