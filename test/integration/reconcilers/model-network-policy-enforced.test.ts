/**
 * The model's NetworkPolicy enforced by a real policy engine: kube-router's network policy controller
 * (test/support/kube-router.ts) guards the kwok Node of the model's replica, whose pods are given network namespaces
 * with their cluster addresses. The operator's own policy, read by kube-router from the apiserver, answers the
 * gateway's pod and refuses a pod of the model's namespace and a pod wearing the gateway's labels in the wrong
 * namespace; turned off, the same pods get through.
 */
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewaySelectorLabels } from '../../../src/deploy/values.js';
import type { ModelNetworkPolicySettings } from '../../../src/reconcilers/serving/network-policy-plan.js';
import { createTestNamespace, kubectl, testCluster } from '../../support/cluster.js';
import { startPolicyNode, type PolicyNode } from '../../support/kube-router.js';
import { apply, eventually, getJson, runOperator, runOperatorWithCrds, type TestOperator } from './harness.js';

const UID_LABEL = 'prediction.endpoint-operator.dev/deployed-model-uid';
const PORT = 8080;

function pod(name: string, labels: Record<string, string>): string {
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  });
}

async function running(ns: string, selector: string): Promise<{ name: string; ip: string; node: string }> {
  return eventually(
    `a running pod ${selector} in ${ns}`,
    async () => {
      const r = await kubectl(['get', 'pods', '-n', ns, '-l', selector, '-o', 'json']);
      const items = (
        JSON.parse(r.stdout) as {
          items: {
            metadata: { name: string };
            spec: { nodeName?: string };
            status: { podIP?: string; phase?: string };
          }[];
        }
      ).items;
      const p = items.find((i) => i.status.phase === 'Running' && i.status.podIP !== undefined);
      return p && { name: p.metadata.name, ip: p.status.podIP ?? '', node: p.spec.nodeName ?? '' };
    },
    60_000,
  );
}

describe('the NetworkPolicy of a containerSpec model, enforced by kube-router', () => {
  let ns: string;
  let gatewayNs: string;
  let op: TestOperator | undefined;
  let node: PolicyNode | undefined;

  beforeAll(async () => {
    ns = await createTestNamespace('netpol-enforced');
    gatewayNs = await createTestNamespace('gateway');
  });

  afterAll(async () => {
    await node?.stop();
    await op?.stop();
    // Namespaces are never deleted in this cluster: free the simulated nodes for the other suites.
    await kubectl(['delete', '-n', ns, 'deployedmodels,deployments,pods', '--all', '--wait=false']);
    await kubectl(['delete', '-n', gatewayNs, 'pods', '--all', '--wait=false']);
  });

  it("answers the gateway's pod and refuses every other, until the policy is turned off", async () => {
    const settings: ModelNetworkPolicySettings = {
      gatewayNamespace: gatewayNs,
      gatewayPodLabels: gatewaySelectorLabels(),
      extraIngressFrom: [],
    };
    op = await runOperatorWithCrds(ns, { modelNetworkPolicy: settings });
    await apply(
      ns,
      [
        {
          apiVersion: 'prediction.endpoint-operator.dev/v1',
          kind: 'PredictionEndpoint',
          metadata: { name: 'guarded' },
          spec: { displayName: 'Guarded' },
        },
        {
          apiVersion: 'prediction.endpoint-operator.dev/v1',
          kind: 'DeployedModel',
          metadata: { name: 'guarded' },
          spec: {
            endpointRef: { name: 'guarded' },
            id: '7200',
            model: 'projects/p/locations/l/models/guarded',
            containerSpec: { imageUri: 'registry.example/server:1' },
            dedicatedResources: { machineSpec: { machineType: 'n1-standard-2' }, minReplicaCount: 1 },
          },
        },
      ]
        .map((o) => yaml.dump(o))
        .join('---\n'),
    );
    await apply(gatewayNs, pod('gateway', gatewaySelectorLabels()));
    // The gateway's labels in the model's namespace: the namespace selector must refuse it.
    await apply(ns, `${pod('impostor', gatewaySelectorLabels())}---\n${pod('intruder', { app: 'intruder' })}`);
    const uid = (await getJson(ns, 'deployedmodel/guarded')).metadata.uid ?? '';
    await eventually(
      'the policy',
      async () => (await kubectl(['get', '-n', ns, 'networkpolicy/dm-guarded', '-o', 'name'])).code === 0,
    );
    const model = await running(ns, `${UID_LABEL}=${uid}`);
    const gateway = await running(gatewayNs, 'app.kubernetes.io/name=endpoint-operator-gateway');
    const impostor = await running(ns, 'app.kubernetes.io/name=endpoint-operator-gateway');
    const intruder = await running(ns, 'app=intruder');

    node = await startPolicyNode(testCluster().kubeconfig, model.node, [
      { name: 'model', ip: model.ip },
      { name: 'gateway', ip: gateway.ip },
      { name: 'impostor', ip: impostor.ip },
      { name: 'intruder', ip: intruder.ip },
    ]);
    const policyNode = node;
    await policyNode.serve('model', PORT);
    const calls = async (): Promise<Record<string, string>> => ({
      gateway: await policyNode.call('gateway', model.ip, PORT),
      impostor: await policyNode.call('impostor', model.ip, PORT),
      intruder: await policyNode.call('intruder', model.ip, PORT),
    });
    const enforced = { gateway: '200', impostor: 'ECONNREFUSED', intruder: 'ECONNREFUSED' };
    // kube-router syncs its rules a moment after it starts (and after each change it watches).
    const seen = await eventually(
      'the policy enforced',
      async () => {
        const c = await calls();
        return JSON.stringify(c) === JSON.stringify(enforced) ? c : undefined;
      },
      90_000,
    );
    expect(seen).toEqual(enforced);

    // Off: the operator deletes its policy, and kube-router lets everyone through.
    await op.stop();
    op = await runOperator(ns);
    await eventually(
      'every pod answered',
      async () => {
        const c = await calls();
        return c.gateway === '200' && c.impostor === '200' && c.intruder === '200';
      },
      60_000,
    );
  }, 900_000); // kube-router is built from the Go module proxy on its first use
});
