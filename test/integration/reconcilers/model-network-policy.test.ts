/**
 * The NetworkPolicy of a containerSpec model on the real control plane: the operator creates it with exactly the
 * gateway's selectors and the model's port, selecting exactly the model's pods (kwok's, placed by the real
 * scheduler), puts back a hand edit, follows a settings change, deletes it when turned off, and garbage collection
 * removes it with the model. Nothing here enforces the policy: this cluster runs no policy engine
 * (docs/local-cluster.md); the object is what is tested.
 */
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewaySelectorLabels } from '../../../src/deploy/values.js';
import type { ModelNetworkPolicySettings } from '../../../src/reconcilers/serving/network-policy-plan.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { apply, eventually, getJson, runOperator, runOperatorWithCrds, type TestOperator } from './harness.js';

const GATEWAY: ModelNetworkPolicySettings = {
  gatewayNamespace: 'endpoint-operator-system',
  gatewayPodLabels: gatewaySelectorLabels(),
  extraIngressFrom: [],
};
const SCRAPER = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
  podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
};
const UID_LABEL = 'prediction.endpoint-operator.dev/deployed-model-uid';

const MODEL = `
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: guarded }
spec:
  endpointRef: { name: guarded }
  id: "7100"
  model: projects/p/locations/l/models/guarded
  containerSpec:
    imageUri: registry.example/server:1
    ports: [{ containerPort: 9000 }]
  dedicatedResources:
    machineSpec: { machineType: n1-standard-2 }
    minReplicaCount: 2
`;

interface PolicySpec {
  podSelector: unknown;
  policyTypes: string[];
  ingress: unknown[];
}

async function policy(ns: string): Promise<{ spec: PolicySpec; uid: string; owners: unknown } | undefined> {
  const r = await kubectl(['get', '-n', ns, 'networkpolicy/dm-guarded', '-o', 'json', '--ignore-not-found']);
  if (r.stdout.trim() === '') return undefined;
  const obj = JSON.parse(r.stdout) as { spec: PolicySpec; metadata: { uid: string; ownerReferences?: unknown } };
  return { spec: obj.spec, uid: obj.metadata.uid, owners: obj.metadata.ownerReferences };
}

function podNames(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .sort();
}

describe('the NetworkPolicy of a containerSpec model', () => {
  let ns: string;
  let op: TestOperator | undefined;

  beforeAll(async () => {
    ns = await createTestNamespace('netpol');
    op = await runOperatorWithCrds(ns, { modelNetworkPolicy: GATEWAY });
  });

  afterAll(async () => {
    // Namespaces are never deleted in this cluster: free the simulated nodes for the other suites.
    await kubectl(['delete', '-n', ns, 'deployedmodels', '--all', '--wait=false']);
    await kubectl(['delete', '-n', ns, 'deployments', '--all', '--wait=false']);
    await kubectl(['delete', '-n', ns, 'pod/bystander', '--wait=false', '--ignore-not-found']);
    await op?.stop();
  });

  it("admits only the gateway's pods on the model's port, selects exactly the model's pods, and is kept, followed, removed", async () => {
    await apply(
      ns,
      'apiVersion: prediction.endpoint-operator.dev/v1\nkind: PredictionEndpoint\nmetadata: { name: guarded }\nspec: { displayName: Guarded }\n---' +
        MODEL,
    );
    const dm = await getJson(ns, 'deployedmodel/guarded');
    const uid = dm.metadata.uid ?? '';
    const gatewayRule = {
      from: [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'endpoint-operator-system' } },
          podSelector: { matchLabels: gatewaySelectorLabels() },
        },
      ],
      ports: [{ protocol: 'TCP', port: 9000 }],
    };
    const created = await eventually('the NetworkPolicy', () => policy(ns));
    expect(created.owners).toEqual([
      {
        apiVersion: 'prediction.endpoint-operator.dev/v1',
        kind: 'DeployedModel',
        name: 'guarded',
        uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(created.spec).toEqual({
      podSelector: { matchLabels: { [UID_LABEL]: uid } },
      policyTypes: ['Ingress'],
      ingress: [gatewayRule],
    });
    // The model names it among the objects that serve it.
    await eventually('the policy named in status.serving', async () => {
      const serving = (await getJson(ns, 'deployedmodel/guarded')).status?.serving as
        Record<string, string> | undefined;
      return serving?.networkPolicy === 'dm-guarded' && serving.deployment === 'dm-guarded';
    });

    // The selector picks the model's two replicas and nothing else of the namespace.
    await apply(
      ns,
      'apiVersion: v1\nkind: Pod\nmetadata: { name: bystander, labels: { app: other } }\nspec: { containers: [{ name: c, image: x }] }\n',
    );
    const replicas = await eventually('two replicas of the model', async () => {
      const r = await kubectl(['get', 'pods', '-n', ns, '-l', `${UID_LABEL}=${uid}`, '-o', 'name']);
      const names = podNames(r.stdout);
      return names.length === 2 ? names : undefined;
    });
    const all = podNames((await kubectl(['get', 'pods', '-n', ns, '-o', 'name'])).stdout);
    expect(all).toContain('pod/bystander');
    const deploymentSelector = (await getJson(ns, 'deployment/dm-guarded')).spec as { selector: unknown };
    expect(deploymentSelector.selector).toEqual(created.spec.podSelector);
    expect(replicas.every((p) => p.startsWith('pod/dm-guarded-'))).toBe(true);

    // A hand edit that opens the pods to everyone is put back.
    const opened = await kubectl([
      'patch',
      '-n',
      ns,
      'networkpolicy/dm-guarded',
      '--type=merge',
      '-p',
      '{"spec":{"ingress":[{}]}}',
    ]);
    expect(opened.code, opened.stderr).toBe(0);
    await eventually('the hand edit reverted', async () => {
      const p = await policy(ns);
      // Deep equality: the apiserver writes keys in its own order.
      return isDeepStrictEqual(p?.spec.ingress, [gatewayRule]);
    });

    // A metrics scraper configured: the same object gains a rule admitting it on every port.
    await op?.stop();
    op = await runOperator(ns, { modelNetworkPolicy: { ...GATEWAY, extraIngressFrom: [SCRAPER] } });
    const updated = await eventually('the scraper admitted', async () => {
      const p = await policy(ns);
      return p?.spec.ingress.length === 2 ? p : undefined;
    });
    expect(updated.uid).toBe(created.uid);
    expect(updated.spec.ingress).toEqual([gatewayRule, { from: [SCRAPER] }]);

    // Turned off: the operator deletes the policy it made, and makes none again.
    await op?.stop();
    op = await runOperator(ns);
    await eventually('the policy deleted', async () => (await policy(ns)) === undefined);
    await eventually('status.serving names no policy', async () => {
      const serving = (await getJson(ns, 'deployedmodel/guarded')).status?.serving as
        Record<string, string> | undefined;
      return serving?.deployment === 'dm-guarded' && serving.networkPolicy === undefined;
    });

    // Back on, then the model goes: garbage collection takes the policy with it.
    await op?.stop();
    op = await runOperator(ns, { modelNetworkPolicy: GATEWAY });
    await eventually('the policy again', () => policy(ns));
    const deleted = await kubectl(['delete', '-n', ns, 'deployedmodel/guarded', '--timeout=60s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    await eventually('the policy removed by garbage collection', async () => (await policy(ns)) === undefined, 60_000);
  }, 180_000);
});
