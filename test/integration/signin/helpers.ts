import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { generateCrds, DEFAULT_CRD_OPTIONS } from '../../../src/api/crd/generate.js';
import { posKinds } from '../../../src/api/pos/v1/index.js';
import { KubeClient } from '../../../src/runtime/kube-client.js';
import type { KubeObject, ResourceRef } from '../../../src/runtime/kube-object.js';
import { posResources } from '../../../src/signin/kube/resources.js';
import { runCli } from '../../support/cli.js';
import { kubectl, testCluster } from '../../support/cluster.js';
import { REPO_ROOT } from '../../support/examples.js';

export function testClient(): KubeClient {
  return KubeClient.fromKubeconfig(testCluster().kubeconfig);
}

export async function eventually<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CRDS: ResourceRef = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', namespaced: false };

/**
 * Creates or updates the POS CRDs generated from src/api through the API: on 1.20 both kubectl's
 * client-side validation and server-side apply refuse x-kubernetes-validations, while a plain
 * create/update is accepted (the apiserver drops the field it does not know).
 */
export async function installPosCrds(): Promise<void> {
  const client = testClient();
  try {
    for (const crd of generateCrds(DEFAULT_CRD_OPTIONS, posKinds)) {
      const existing = await client.get<KubeObject>(CRDS, undefined, crd.metadata.name);
      if (!existing) await client.create(CRDS, undefined, crd);
      else await client.replace(CRDS, undefined, crd.metadata.name, { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata.resourceVersion } });
    }
    for (const k of posKinds) {
      const waited = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${k.plural}.${k.group}`]);
      if (waited.code !== 0) throw new Error(`CRD ${k.plural} not Established: ${waited.stderr}`);
    }
    await eventually('POS kinds to be served', async () => {
      try {
        await client.list(posResources.signInSessions, 'default', { limit: 1 });
        return true;
      } catch {
        return false;
      }
    });
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
