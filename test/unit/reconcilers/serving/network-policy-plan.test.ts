import { describe, expect, it } from 'vitest';
import { networkPolicyPeerSchema } from '../../../../src/api/common/network-policy-peer.js';
import {
  networkPolicyManifest,
  type ModelNetworkPolicySettings,
} from '../../../../src/reconcilers/serving/network-policy-plan.js';
import type { ServingInput } from '../../../../src/reconcilers/serving/serving-plan.js';

function input(ports?: { containerPort: number }[]): ServingInput {
  return {
    model: {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: { name: 'xgb', namespace: 'ns', uid: 'u-1' },
    },
    spec: {
      endpointRef: { name: 'churn' },
      model: 'projects/p/locations/l/models/m',
      containerSpec: { imageUri: 'img:1', ...(ports === undefined ? {} : { ports }) },
    },
    id: '42',
  };
}

const GATEWAY: ModelNetworkPolicySettings = {
  gatewayNamespace: 'endpoint-operator-system',
  gatewayPodLabels: { 'app.kubernetes.io/name': 'endpoint-operator-gateway', 'app.kubernetes.io/instance': 'eo' },
  extraIngressFrom: [],
};

const SCRAPER = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
  podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
};

describe("a containerSpec model's NetworkPolicy", () => {
  it("admits only the gateway's pods, in the gateway's namespace, on the model's port, to the model's pods", () => {
    expect(networkPolicyManifest(input([{ containerPort: 7080 }]), GATEWAY)).toEqual({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: {
        name: 'dm-xgb',
        namespace: 'ns',
        labels: {
          'app.kubernetes.io/managed-by': 'endpoint-operator',
          'prediction.endpoint-operator.dev/deployed-model-uid': 'u-1',
        },
        ownerReferences: [
          {
            apiVersion: 'prediction.endpoint-operator.dev/v1',
            kind: 'DeployedModel',
            name: 'xgb',
            uid: 'u-1',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        podSelector: { matchLabels: { 'prediction.endpoint-operator.dev/deployed-model-uid': 'u-1' } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            // One peer: both selectors must match (two peers would admit every pod of the operator namespace).
            from: [
              {
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'endpoint-operator-system' } },
                podSelector: {
                  matchLabels: {
                    'app.kubernetes.io/name': 'endpoint-operator-gateway',
                    'app.kubernetes.io/instance': 'eo',
                  },
                },
              },
            ],
            ports: [{ protocol: 'TCP', port: 7080 }],
          },
        ],
      },
    });
  });

  it("uses Vertex's default port 8080 when the containerSpec names none", () => {
    const spec = networkPolicyManifest(input(), GATEWAY).spec as { ingress: { ports: unknown }[] };
    expect(spec.ingress[0]?.ports).toEqual([{ protocol: 'TCP', port: 8080 }]);
  });

  it('admits the extra peers (a metrics scraper) on every port, in a rule of their own', () => {
    const spec = networkPolicyManifest(input(), { ...GATEWAY, extraIngressFrom: [SCRAPER] }).spec as {
      ingress: Record<string, unknown>[];
    };
    expect(spec.ingress).toHaveLength(2);
    expect(spec.ingress[1]).toEqual({ from: [SCRAPER] });
  });

  it('takes a NetworkPolicyPeer as Kubernetes defines it, and refuses an empty one, ipBlock with selectors, or unknown fields', () => {
    expect(networkPolicyPeerSchema.parse(SCRAPER)).toEqual(SCRAPER);
    expect(
      networkPolicyPeerSchema.safeParse({ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }).success,
    ).toBe(true);
    expect(
      networkPolicyPeerSchema.safeParse({
        podSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['prometheus'] }] },
      }).success,
    ).toBe(true);
    expect(networkPolicyPeerSchema.safeParse({}).success).toBe(false);
    expect(networkPolicyPeerSchema.safeParse({ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }).success).toBe(false);
    expect(networkPolicyPeerSchema.safeParse({ podSelector: { matchLabel: { app: 'x' } } }).success).toBe(false);
    expect(
      networkPolicyPeerSchema.safeParse({ podSelector: { matchExpressions: [{ key: 'app', operator: 'Is' }] } })
        .success,
    ).toBe(false);
  });
});
