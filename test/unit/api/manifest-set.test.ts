import { describe, expect, it } from 'vitest';
import { checkManifestSet, type SetMember } from '../../../src/api/manifest-set.js';

const SERVICE = 'projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout';

const pe = (name: string, trafficSplit?: Record<string, number>, namespace = 'ns') => ({
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'PredictionEndpoint',
  metadata: { name, namespace },
  spec: { displayName: name, ...(trafficSplit ? { trafficSplit } : {}) },
});
const dm = (name: string, endpoint: string, id?: string, namespace = 'ns') => ({
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'DeployedModel',
  metadata: { name, namespace },
  spec: {
    endpointRef: { name: endpoint },
    ...(id ? { id } : {}),
    model: 'projects/p/locations/l/models/m',
    automaticResources: {},
  },
});
const svc = (name: string, specName = SERVICE, namespace = 'ns') => ({
  apiVersion: 'registry.endpoint-operator.dev/v1',
  kind: 'RegistryService',
  metadata: { name, namespace },
  spec: { name: specName },
});
const rep = (name: string, version = 'v1', parent = SERVICE, namespace = 'ns') => ({
  apiVersion: `registry.endpoint-operator.dev/${version}`,
  kind: 'RegistryEndpoint',
  metadata: { name, namespace },
  spec: { name: `${parent}/endpoints/${name}` },
});

/** Members of one file each, `f1.yaml` ... in order. */
function set(...objects: unknown[]): SetMember[] {
  return objects.map((object, i) => ({ file: `f${i + 1}.yaml`, document: 1, object }));
}
const summary = (members: SetMember[]) =>
  checkManifestSet(members).map((f) => `${f.subject.file} ${f.error.field}${f.other ? ` <- ${f.other.file}` : ''}`);

describe('manifest-set cross-checks', () => {
  it('finds nothing in a complete, consistent set', () => {
    expect(
      summary(
        set(
          pe('fraud', { '1': 70, '2': 30 }),
          dm('a', 'fraud', '1'),
          dm('b', 'fraud', '2'),
          svc('checkout'),
          rep('c1'),
          rep('c2', 'v1beta1'),
        ),
      ),
    ).toEqual([]);
  });

  it('a trafficSplit key that no DeployedModel of the endpoint deploys', () => {
    expect(summary(set(pe('fraud', { '1': 70, '2': 30 }), dm('a', 'fraud', '1'), dm('b', 'other', '2')))).toEqual([
      'f3.yaml spec.endpointRef.name',
      'f1.yaml spec.trafficSplit[2]',
    ]);
  });

  it('a DeployedModel whose endpointRef names no PredictionEndpoint in the set (namespaces count)', () => {
    const findings = checkManifestSet(set(pe('fraud', undefined, 'ns-a'), dm('a', 'fraud', undefined, 'ns-b')));
    expect(findings.map((f) => f.error.field)).toEqual(['spec.endpointRef.name']);
    expect(findings[0]?.error.detail).toMatch(
      /names PredictionEndpoint "fraud", which is not in the set \(in namespace "ns-b"\).*EndpointNotFound/,
    );
  });

  it('a RegistryEndpoint (either version) whose parent RegistryService is not in the set', () => {
    expect(summary(set(svc('checkout'), rep('c1', 'v1', `${SERVICE}x`), rep('c2', 'v1beta1', `${SERVICE}x`)))).toEqual([
      'f2.yaml spec.name',
      'f3.yaml spec.name',
    ]);
  });

  it('two RegistryServices with one spec.name, naming both files and documents', () => {
    const findings = checkManifestSet([
      { file: 'a.yaml', document: 2, object: svc('checkout') },
      { file: 'b.yaml', document: 5, object: svc('checkout-again') },
      { file: 'c.yaml', document: 1, object: svc('elsewhere', SERVICE, 'other-ns') },
    ]);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      subject: { file: 'b.yaml', document: 5 },
      other: { file: 'a.yaml', document: 2 },
    });
    expect(findings[0]?.error.detail).toContain(
      'RegistryService ns/checkout in a.yaml (document 2) has the same spec.name',
    );
  });

  it('two DeployedModels with one id on one endpoint (not on two endpoints)', () => {
    const findings = checkManifestSet(
      set(pe('fraud', { '7': 100 }), pe('churn'), dm('a', 'fraud', '7'), dm('b', 'fraud', '7'), dm('c', 'churn', '7')),
    );
    expect(findings.map((f) => `${f.subject.file} ${f.error.field} ${f.error.type}`)).toEqual([
      'f4.yaml spec.id FieldValueDuplicate',
    ]);
    expect(findings[0]?.error.detail).toContain(
      'DeployedModel ns/a in f3.yaml (document 1) already deploys id "7" to endpoint "fraud"',
    );
  });

  it('objects without a namespace are one namespace (the one the set is applied to)', () => {
    expect(summary(set(pe('fraud', { '1': 100 }, ''), dm('a', 'fraud', '1', '')))).toEqual([]);
    expect(checkManifestSet(set(dm('a', 'fraud', '1', '')))[0]?.error.detail).toContain(
      'in the namespace the set is applied to',
    );
  });

  it('skips what it cannot read: other kinds, objects without spec or metadata, malformed references', () => {
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: {} };
    expect(
      summary(set(configMap, { kind: 'DeployedModel' }, 'text', null, dm('a', ''), rep('bad', 'v1', 'not-a-service'))),
    ).toEqual([]);
  });
});
