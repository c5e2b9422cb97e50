/**
 * The gateway's fleet as the generator renders it: an HPA that owns the replica count (so the Deployment has none),
 * a PodDisruptionBudget right at every size, replicas spread over nodes; and the NetworkPolicies of both components.
 */
import { describe, expect, it } from 'vitest';
import { deployManifests, type Manifest } from '../../../src/deploy/manifests.js';
import { DEFAULT_DEPLOY_VALUES, gatewaySelectorLabels, selectorLabels, type DeployValues } from '../../../src/deploy/values.js';
import { deployValuesSchema } from '../../../src/deploy/values-schema.js';

type Obj = Record<string, unknown> & { spec: Record<string, unknown> };
const GATEWAY = 'endpoint-operator-gateway';

function find(objects: Manifest[], kind: string, name: string): Obj | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name) as Obj | undefined;
}
function must(objects: Manifest[], kind: string, name: string): Obj {
  const found = find(objects, kind, name);
  if (found === undefined) throw new Error(`no ${kind}/${name}`);
  return found;
}
function withGateway(change: Partial<DeployValues['gateway']>): DeployValues {
  return { ...DEFAULT_DEPLOY_VALUES, gateway: { ...DEFAULT_DEPLOY_VALUES.gateway, ...change } };
}

describe('the gateway HorizontalPodAutoscaler', () => {
  it('scales the gateway Deployment on CPU between 2 and 10 replicas by default, and the Deployment names no replica count', () => {
    const objects = deployManifests(DEFAULT_DEPLOY_VALUES);
    expect(must(objects, 'HorizontalPodAutoscaler', GATEWAY)).toMatchObject({
      apiVersion: 'autoscaling/v2',
      metadata: { namespace: DEFAULT_DEPLOY_VALUES.namespace },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: GATEWAY },
        minReplicas: 2,
        maxReplicas: 10,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
        // Kubernetes' own default, written out so that a value changes it.
        behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
      },
    });
    // A replicas field would be applied on every upgrade, resetting what the HPA chose.
    expect(must(objects, 'Deployment', GATEWAY).spec).not.toHaveProperty('replicas');
  });

  it('follows the values, and when off leaves the count to gateway.replicas', () => {
    const scaled = deployManifests(withGateway({ autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 30, targetCPUUtilizationPercentage: 50, scaleDownStabilizationSeconds: 20 } }));
    expect(must(scaled, 'HorizontalPodAutoscaler', GATEWAY).spec).toMatchObject({
      minReplicas: 3,
      maxReplicas: 30,
      metrics: [{ resource: { target: { averageUtilization: 50 } } }],
      behavior: { scaleDown: { stabilizationWindowSeconds: 20 } },
    });
    const window = (seconds: number): boolean =>
      deployValuesSchema.safeParse(withGateway({ autoscaling: { ...DEFAULT_DEPLOY_VALUES.gateway.autoscaling, scaleDownStabilizationSeconds: seconds } })).success;
    expect([window(0), window(3600), window(-1), window(3601), window(1.5)]).toEqual([true, true, false, false, false]);
    const fixed = deployManifests(withGateway({ replicas: 4, autoscaling: { ...DEFAULT_DEPLOY_VALUES.gateway.autoscaling, enabled: false } }));
    expect(find(fixed, 'HorizontalPodAutoscaler', GATEWAY)).toBeUndefined();
    expect(must(fixed, 'Deployment', GATEWAY).spec['replicas']).toBe(4);
  });

  it('keeps a PodDisruptionBudget of maxUnavailable 1, which lets a drain go on at two replicas and takes one at a time at ten', () => {
    const pdb = must(deployManifests(DEFAULT_DEPLOY_VALUES), 'PodDisruptionBudget', GATEWAY);
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: gatewaySelectorLabels() } });
    expect(deployValuesSchema.safeParse(withGateway({ podDisruptionBudget: { maxUnavailable: 0 } })).success).toBe(false);
  });

  it('prefers one replica per node, as the operator does', () => {
    const objects = deployManifests(DEFAULT_DEPLOY_VALUES);
    const affinity = (name: string): unknown => (must(objects, 'Deployment', name).spec['template'] as { spec: { affinity: unknown } }).spec.affinity;
    expect(affinity(GATEWAY)).toEqual({
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: gatewaySelectorLabels() } } }],
      },
    });
  });
});

describe('the NetworkPolicies of the operator and the gateway', () => {
  const ports = (rule: { ports?: { port: string }[] }): string[] => (rule.ports ?? []).map((p) => p.port);

  it('admit the gateway API port from every namespace by default, or from the labelled ones', () => {
    const ingress = (values: DeployValues): { from?: unknown[]; ports: { port: string }[] }[] => must(deployManifests(values), 'NetworkPolicy', GATEWAY).spec['ingress'] as never;
    expect(ingress(DEFAULT_DEPLOY_VALUES)[0]).toEqual({ from: [{ namespaceSelector: {} }], ports: [{ port: 'http', protocol: 'TCP' }] });
    const labelled = ingress(withGateway({ networkPolicy: { enabled: true, clientNamespaceLabel: 'example.com/ml-clients' } }));
    expect(labelled[0]?.from).toEqual([{ namespaceSelector: { matchLabels: { 'example.com/ml-clients': 'true' } } }]);
    expect(labelled[1]).toEqual({ ports: [{ port: 'health', protocol: 'TCP' }] });
  });

  it('admit the webhook port from the apiserver peers, the metrics port from the scraper, and no one where a list is empty', () => {
    const policy = must(deployManifests(DEFAULT_DEPLOY_VALUES), 'NetworkPolicy', 'endpoint-operator');
    expect(policy.spec['podSelector']).toEqual({ matchLabels: selectorLabels() });
    expect(policy.spec['policyTypes']).toEqual(['Ingress']);
    const rules = policy.spec['ingress'] as { from?: unknown[]; ports: { port: string }[] }[];
    expect(rules.map(ports)).toEqual([['webhook'], ['metrics'], ['health']]);
    expect(rules[0]?.from).toEqual(DEFAULT_DEPLOY_VALUES.networkPolicy.webhookFrom);
    expect(rules[1]?.from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
    const closed = { ...DEFAULT_DEPLOY_VALUES, networkPolicy: { enabled: true, webhookFrom: [], metricsFrom: [] }, signin: { ...DEFAULT_DEPLOY_VALUES.signin, enabled: true } };
    const closedRules = must(deployManifests(closed), 'NetworkPolicy', 'endpoint-operator').spec['ingress'] as { ports: { port: string }[] }[];
    expect(closedRules.map(ports)).toEqual([['health', 'signin']]);
  });

  it('answer kube-score with its ignore annotation only for the checks the chart chooses not to follow', () => {
    const annotation = (values: DeployValues, name: string): unknown => (must(deployManifests(values), 'Deployment', name).metadata as { annotations?: Record<string, string> }).annotations?.['kube-score/ignore'];
    expect(annotation(DEFAULT_DEPLOY_VALUES, GATEWAY)).toBe('container-resources,container-image-pull-policy,pod-networkpolicy');
    const always = { ...DEFAULT_DEPLOY_VALUES, image: { ...DEFAULT_DEPLOY_VALUES.image, pullPolicy: 'Always' as const }, networkPolicy: { ...DEFAULT_DEPLOY_VALUES.networkPolicy, enabled: false } };
    // Without the chart's own policy there is no ingress policy either: kube-score's finding stands.
    expect(annotation(always, 'endpoint-operator')).toBe('container-resources');
  });
});
