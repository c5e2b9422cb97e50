import { describe, expect, it } from 'vitest';
import { parseFlags } from '../../../src/cli/flags.js';
import { RUN_FLAGS, runConfig } from '../../../src/cli/run.js';

const config = (argv: string[], env: Record<string, string> = {}): ReturnType<typeof runConfig> =>
  runConfig(parseFlags(RUN_FLAGS, argv, env));

describe('endpoint-operator run: the NetworkPolicy of containerSpec models', () => {
  it("is on by default, admitting the chart's gateway pods in the operator namespace", () => {
    expect(config([], { POD_NAMESPACE: 'ops' }).operator.modelNetworkPolicy).toEqual({
      gatewayNamespace: 'ops',
      gatewayPodLabels: {
        'app.kubernetes.io/name': 'endpoint-operator-gateway',
        'app.kubernetes.io/instance': 'endpoint-operator',
      },
      extraIngressFrom: [],
    });
  });

  it('is off with --model-network-policy=false or its variable', () => {
    expect(config(['--model-network-policy=false']).operator.modelNetworkPolicy).toBeUndefined();
    expect(config(['--no-model-network-policy']).operator.modelNetworkPolicy).toBeUndefined();
    expect(config([], { EO_MODEL_NETWORK_POLICY: 'false' }).operator.modelNetworkPolicy).toBeUndefined();
  });

  it('takes other gateway pod labels and extra peers as JSON', () => {
    const scraper = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
    const policy = config([
      '--gateway-pod-labels=app=gw,tier=edge',
      `--model-network-policy-extra-from=${JSON.stringify([scraper, { ipBlock: { cidr: '10.9.0.0/16' } }])}`,
    ]).operator.modelNetworkPolicy;
    expect(policy?.gatewayPodLabels).toEqual({ app: 'gw', tier: 'edge' });
    expect(policy?.extraIngressFrom).toEqual([scraper, { ipBlock: { cidr: '10.9.0.0/16' } }]);
  });

  it('refuses labels without a value, no labels (which would admit every pod of the namespace), and peers that are not NetworkPolicyPeers', () => {
    expect(() => config(['--gateway-pod-labels=app'])).toThrow(/--gateway-pod-labels: expected KEY=VALUE, got "app"/);
    expect(() => config([], { EO_GATEWAY_POD_LABELS: ' , ' })).toThrow(/at least one label/);
    expect(() => config(['--model-network-policy-extra-from={'])).toThrow(/is not JSON/);
    expect(() => config(['--model-network-policy-extra-from=[{"podSelecter":{}}]'])).toThrow(
      /must be a JSON list of NetworkPolicyPeer/,
    );
    // Checked with the policy off as well: turning it on later does not reveal a mistake made now.
    expect(() => config(['--model-network-policy=false', '--model-network-policy-extra-from={}'])).toThrow(
      /must be a JSON list of NetworkPolicyPeer/,
    );
  });
});
