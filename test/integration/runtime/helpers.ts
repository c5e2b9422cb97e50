/** Shared by the runtime integration tests: a client for the test cluster, polling, a test CRD, etcd compaction. */
import { KubeClient } from '../../../src/kube/kube-client.js';
import type { ResourceRef } from '../../../src/api/common/kube-object.js';
import { kubectl, testCluster } from '../../support/cluster.js';

export function testClient(onWarning?: (w: string) => void): KubeClient {
  return KubeClient.fromKubeconfig(testCluster().kubeconfig, onWarning ? { onWarning } : {});
}

/** Polls `check` every 50 ms until it returns a value that is not undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const GADGET_GROUP = 'runtime-test.endpoint-operator.dev';
export const gadgets: ResourceRef = { group: GADGET_GROUP, version: 'v1', plural: 'gadgets', namespaced: true };

/** A CRD with a status subresource, applied once per run (idempotent) and waited on until Established. */
export async function ensureGadgetCrd(): Promise<void> {
  const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.${GADGET_GROUP}
spec:
  group: ${GADGET_GROUP}
  scope: Namespaced
  names: { plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList }
  versions:
    - name: v1
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-preserve-unknown-fields: true
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
`;
  const applied = await kubectl(['apply', '-f', '-'], { input: crd });
  if (applied.code !== 0) throw new Error(`applying the Gadget CRD failed: ${applied.stderr}`);
  const waited = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/gadgets.${GADGET_GROUP}`]);
  if (waited.code !== 0) throw new Error(`Gadget CRD not Established: ${waited.stderr}`);
  // Discovery can lag Established by a moment; wait until the resource answers.
  const client = testClient();
  await eventually('gadgets to be served', async () => {
    try {
      await client.list(gadgets, 'default', { limit: 1 });
      return true;
    } catch {
      return false;
    }
  });
  client.close();
}

/**
 * Compacts etcd to its current revision through the v3 HTTP gateway, so a watch from any
 * older resourceVersion fails with 410 Expired (the test apiserver runs without watch cache).
 */
export async function compactEtcd(): Promise<number> {
  const endpoint = testCluster().etcdEndpoint;
  if (!endpoint) throw new Error('no etcd endpoint (external cluster): cannot compact');
  const range = await fetch(`${endpoint}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from('/').toString('base64') }),
  });
  const body = (await range.json()) as { header?: { revision?: string } };
  const revision = Number(body.header?.revision);
  if (!Number.isFinite(revision) || revision <= 0)
    throw new Error(`etcd range returned no revision: ${JSON.stringify(body)}`);
  const compacted = await fetch(`${endpoint}/v3/kv/compaction`, {
    method: 'POST',
    body: JSON.stringify({ revision: String(revision), physical: true }),
  });
  if (!compacted.ok) throw new Error(`etcd compaction failed: ${compacted.status} ${await compacted.text()}`);
  return revision;
}
