import { describe, expect, it } from 'vitest';
import { deployManifests } from '../../../src/deploy/manifests.js';
import type { PolicyRule } from '../../../src/deploy/rbac.js';
import { DEFAULT_DEPLOY_VALUES } from '../../../src/deploy/values.js';

type RoleObject = { kind: string; metadata: { name: string; namespace?: string }; rules: PolicyRule[] };

const values = { ...DEFAULT_DEPLOY_VALUES, signin: { ...DEFAULT_DEPLOY_VALUES.signin, enabled: true, namespace: 'shops' } };
const objects = deployManifests(values) as unknown as RoleObject[];

/** Flattens rules to `group/resource: verb` grants, so the comparison ignores how rules are grouped. */
function grants(kind: string, namespace?: string, name = namespace === 'shops' ? 'endpoint-operator-signin' : 'endpoint-operator'): string[] {
  const roles = objects.filter((o) => o.kind === kind && o.metadata.namespace === namespace && o.metadata.name === name);
  expect(roles, `${kind} in ${namespace ?? 'the cluster'}`).toHaveLength(1);
  const named = (rule: PolicyRule, res: string): string[] => (rule.resourceNames ?? ['']).map((n) => (n === '' ? res : `${res}/${n}`));
  return roles.flatMap((r) => r.rules.flatMap((rule) => rule.apiGroups.flatMap((g) => rule.resources.flatMap((res) => named(rule, res).flatMap((nr) => rule.verbs.map((v) => `${g}/${nr}: ${v}`)))))).sort();
}

function expand(group: string, resources: string[], verbs: string[]): string[] {
  return resources.flatMap((r) => verbs.map((v) => `${group}/${r}: ${v}`));
}

const RECONCILED = (group: string, plurals: string[]): string[] => [
  ...expand(group, plurals, ['get', 'list', 'watch', 'update', 'patch']),
  ...expand(group, plurals.map((p) => `${p}/status`), ['get', 'update', 'patch']),
  ...expand(group, plurals.map((p) => `${p}/finalizers`), ['update']),
];

describe('RBAC', () => {
  it('has no wildcard anywhere', () => {
    for (const o of objects.filter((x) => x.kind === 'ClusterRole' || x.kind === 'Role')) {
      for (const rule of o.rules as (PolicyRule & { nonResourceURLs?: string[] })[]) for (const v of [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...(rule.nonResourceURLs ?? []), ...rule.verbs]) expect(v, `${o.kind}/${o.metadata.name}`).not.toContain('*');
    }
  });

  it('grants cluster-wide exactly the reconciled kinds, the serving objects of containerSpec models, the DNS projection, the gateway CA ConfigMaps, Events, the webhook configurations and CRD caBundle injection', () => {
    expect(grants('ClusterRole')).toEqual([
      ...RECONCILED('prediction.endpoint-operator.dev', ['predictionendpoints', 'deployedmodels', 'models']),
      ...RECONCILED('registry.endpoint-operator.dev', ['registryservices', 'registryendpoints']),
      ...expand('prediction.endpoint-operator.dev', ['modelartifactbuckets'], ['get', 'list', 'watch']),
      ...expand('', ['services'], ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
      ...expand('discovery.k8s.io', ['endpointslices'], ['get', 'list', 'watch', 'create', 'update', 'delete']),
      ...expand('apps', ['deployments'], ['get', 'list', 'watch', 'create', 'patch']),
      ...expand('autoscaling', ['horizontalpodautoscalers'], ['get', 'list', 'watch', 'create', 'patch', 'delete']),
      ...expand('policy', ['poddisruptionbudgets'], ['get', 'list', 'watch', 'create', 'patch', 'delete']),
      ...expand('', ['pods'], ['get', 'list', 'watch']),
      ...expand('networking.k8s.io', ['networkpolicies'], ['get', 'list', 'watch', 'create', 'patch', 'delete']),
      // The gateway CA ConfigMap: only that name, but for a create (which RBAC cannot limit by name).
      ...expand('', ['configmaps'], ['create']),
      ...expand('', ['configmaps/endpoint-operator-gateway-ca.crt'], ['get', 'list', 'watch', 'patch', 'delete']),
      ...expand('', ['events'], ['create', 'patch']),
      ...expand('admissionregistration.k8s.io', ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'], ['get', 'create', 'update', 'patch']),
      ...expand('apiextensions.k8s.io', ['customresourcedefinitions'], ['get', 'patch', 'update']),
      ...expand('authentication.k8s.io', ['tokenreviews'], ['create']),
      ...expand('authorization.k8s.io', ['subjectaccessreviews'], ['create']),
    ].sort());
  });

  it('grants Leases, Secrets and the machine catalogue only in the operator namespace', () => {
    expect(grants('Role', 'endpoint-operator-system')).toEqual([
      ...expand('coordination.k8s.io', ['leases'], ['get', 'create', 'update']),
      ...expand('', ['secrets'], ['get', 'list', 'watch', 'create', 'update']),
      ...expand('', ['configmaps/endpoint-operator-machine-types'], ['get', 'list', 'watch']),
    ].sort());
  });

  it('grants the POS kinds and Secrets only in the sign-in namespace', () => {
    const pos = 'pos.endpoint-operator.dev';
    expect(grants('Role', 'shops')).toEqual([
      ...expand(pos, ['shops', 'shopusers', 'adminusers'], ['get', 'list', 'watch']),
      ...expand(pos, ['shops/status', 'shopusers/status', 'adminusers/status'], ['get', 'update', 'patch']),
      ...expand(pos, ['signinsessions'], ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
      // password Secrets are read by label; only the signing-key Secret is ever updated
      ...expand('', ['secrets'], ['get', 'list', 'watch', 'create']),
      ...expand('', ['secrets/endpoint-operator-signin-key'], ['update']),
      ...expand('coordination.k8s.io', ['leases'], ['get', 'list', 'create', 'update', 'delete']),
    ].sort());
  });

  it('binds every Role to the ServiceAccount of its name: the operator, or the gateway', () => {
    for (const b of objects.filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') as unknown as { metadata: { name: string }; roleRef: { name: string }; subjects: unknown[] }[]) {
      expect(b.roleRef.name).toBe(b.metadata.name);
      const account = b.metadata.name === 'endpoint-operator-gateway' ? 'endpoint-operator-gateway' : 'endpoint-operator';
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: account, namespace: 'endpoint-operator-system' }]);
    }
  });

  it('lets the gateway read (endpoints, deployed models, models, Services, EndpointSlices, the registry kinds), ask for reviews, and write only the three kinds of the write API', () => {
    const others = [
      ...expand('registry.endpoint-operator.dev', ['registryservices', 'registryendpoints'], ['get', 'list', 'watch']),
      ...expand('', ['services'], ['get', 'list', 'watch']),
      ...expand('discovery.k8s.io', ['endpointslices'], ['get', 'list', 'watch']),
      ...expand('authentication.k8s.io', ['tokenreviews'], ['create']),
      ...expand('authorization.k8s.io', ['subjectaccessreviews'], ['create']),
    ];
    const prediction = ['predictionendpoints', 'deployedmodels', 'models'];
    expect(grants('ClusterRole', undefined, 'endpoint-operator-gateway')).toEqual(
      [
        ...expand('prediction.endpoint-operator.dev', prediction, ['get', 'list', 'watch', 'create', 'patch', 'delete']),
        ...expand('', ['namespaces'], ['get']),
        ...others,
      ].sort(),
    );
    // gateway.apiWrites.enabled=false: no write right at all, and the gateway is told so.
    const readOnly = { ...values, gateway: { ...values.gateway, apiWrites: { enabled: false } } };
    const off = deployManifests(readOnly) as unknown as RoleObject[];
    const offRules = off.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'endpoint-operator-gateway')?.rules ?? [];
    const reviews = (r: PolicyRule) => r.resources.some((res) => res.endsWith('reviews'));
    expect(offRules.filter((r) => !reviews(r)).flatMap((r) => r.verbs).filter((v) => ['create', 'patch', 'delete'].includes(v))).toEqual([]);
    expect(offRules.some((r) => r.resources.includes('namespaces'))).toBe(false);
    expect(JSON.stringify(off)).toContain('--api-writes=false');
    expect(JSON.stringify(objects)).not.toContain('--api-writes=false');
  });

  it('ships the caller roles with exactly the gateway verbs, and the metrics reader', () => {
    expect(grants('ClusterRole', undefined, 'endpoint-operator-prediction-caller')).toEqual(expand('prediction.endpoint-operator.dev', ['predictionendpoints'], ['explain', 'get', 'list', 'predict']));
    expect(grants('ClusterRole', undefined, 'endpoint-operator-registry-reader')).toEqual([
      ...expand('registry.endpoint-operator.dev', ['registryendpoints'], ['list']),
      ...expand('registry.endpoint-operator.dev', ['registryservices'], ['get', 'resolve']),
    ]);
    expect(grants('ClusterRole', undefined, 'endpoint-operator-model-deployer')).toEqual(
      expand('prediction.endpoint-operator.dev', ['models', 'predictionendpoints', 'deployedmodels'], ['get', 'list', 'create', 'patch', 'delete']).sort(),
    );
    const metrics = objects.find((o) => o.metadata.name === 'endpoint-operator-metrics-reader');
    expect(metrics?.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
  });
});
