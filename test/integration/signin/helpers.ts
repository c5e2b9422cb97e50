import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { posKinds } from '../../../src/api/pos/v1/index.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { installCrds } from '../../../src/operator/crds.js';
import { runCli } from '../../support/cli.js';
import { kubectl, testCluster } from '../../support/cluster.js';
import { REPO_ROOT } from '../../support/examples.js';

export function testClient(): KubeClient {
  return KubeClient.fromKubeconfig(testCluster().kubeconfig);
}

export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The POS CRDs generated from src/api, installed as `dev` does (create/replace through the API). */
export async function installPosCrds(): Promise<void> {
  const client = testClient();
  try {
    await installCrds(client, { kinds: posKinds });
  } finally {
    client.close();
  }
}

/** The committed examples/valid/pos manifests, moved into `namespace`. */
export function posExamples(namespace: string): string {
  const dir = join(REPO_ROOT, 'examples/valid/pos');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8').replace(/namespace: endpoint-demo/g, `namespace: ${namespace}`))
    .join('\n---\n');
}

/** `endpoint-operator hash-password --secret NAME` piped into `kubectl apply`, as the demo does. */
export async function createPasswordSecret(namespace: string, name: string, password: string): Promise<void> {
  const hashed = await runCli(['hash-password', '--secret', name, '--namespace', namespace], { input: password });
  if (hashed.code !== 0) throw new Error(`hash-password failed: ${hashed.stderr}`);
  if (hashed.stdout.includes(password)) throw new Error('hash-password printed the password');
  const applied = await kubectl(['apply', '-f', '-'], { input: hashed.stdout });
  if (applied.code !== 0) throw new Error(`applying the Secret failed: ${applied.stderr}`);
}
