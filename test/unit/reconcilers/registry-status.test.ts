import { describe, expect, it } from 'vitest';
import {
  computeRegistryEndpointStatus,
  computeRegistryServiceStatus,
} from '../../../src/reconcilers/registry-status.js';
import { parentOf, type RegistryEndpointWorld } from '../../../src/api/registry/endpoint-verdict.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { registryEndpoint, registryService } from './fixtures.js';

const SVC = 'projects/demo-project/locations/europe-west4/namespaces/shop/services/payments';
const NOW = '2026-02-01T10:00:00Z';
const LATER = '2026-02-01T11:00:00Z';
const PREFIXES = ['endpoint-operator.dev', 'endpoint-operator.io'];

function endpointWorld(endpoint: KubeObject, overrides: Partial<RegistryEndpointWorld> = {}): RegistryEndpointWorld {
  return { endpoint, parentExists: true, specErrors: [], reservedPrefixes: PREFIXES, now: NOW, ...overrides };
}

describe('RegistryEndpoint status', () => {
  it('names its parent service', () => {
    expect(parentOf(registryEndpoint('e', `${SVC}/endpoints/e1`).build())).toBe(SVC);
    expect(parentOf(registryEndpoint('e', 'not-a-name').build())).toBeUndefined();
  });

  it('is ParentNotFound until the parent exists, naming spec.name and the parent', () => {
    const ep = registryEndpoint('e', `${SVC}/endpoints/e1`).build();
    const { verdict } = computeRegistryEndpointStatus(endpointWorld(ep, { parentExists: false }));
    expect(verdict).toMatchObject({ status: 'False', reason: 'ParentNotFound' });
    expect(verdict.message).toContain('spec.name');
    expect(verdict.message).toContain(SVC);
  });

  it('is Reconciled with effective annotations (reserved keys left out), times and the recorded name', () => {
    const ep = registryEndpoint('e', `${SVC}/endpoints/e1`, {
      annotations: { 'example.com/team': 'payments', 'endpoint-operator.dev/x': 'y', 'a.endpoint-operator.io/z': 'w' },
    }).build();
    const { status, verdict } = computeRegistryEndpointStatus(endpointWorld(ep));
    expect(verdict).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(status.effectiveAnnotations).toEqual({ 'example.com/team': 'payments' });
    expect(status.name).toBe(`${SVC}/endpoints/e1`);
    expect(status.createTime).toBe('2026-01-01T00:00:00Z');
    expect(status.updateTime).toBe(status.createTime);
    expect(status.observedGeneration).toBe(1);
  });

  it('reports a changed spec.name as InvalidSpec (immutability defence)', () => {
    const first = computeRegistryEndpointStatus(endpointWorld(registryEndpoint('e', `${SVC}/endpoints/e1`).build()));
    const moved = registryEndpoint('e', `${SVC}/endpoints/other`)
      .generation(2)
      .status(first.status as unknown as Record<string, unknown>)
      .build();
    const { verdict, status } = computeRegistryEndpointStatus(endpointWorld(moved, { now: LATER }));
    expect(verdict).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(verdict.message).toContain('spec.name');
    expect(verdict.message).toContain('immutable');
    expect(status.name).toBe(`${SVC}/endpoints/e1`);
    expect(status.updateTime).toBe(LATER);
  });

  it('reports validation errors as InvalidSpec and is stable when nothing changed', () => {
    const ep = registryEndpoint('e', `${SVC}/endpoints/e1`).build();
    const bad = computeRegistryEndpointStatus(
      endpointWorld(ep, {
        specErrors: [
          { field: 'spec.address', type: 'FieldValueInvalid', value: '8.8.8', detail: 'must be an IP address' },
        ],
      }),
    );
    expect(bad.verdict).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(bad.verdict.message).toContain('spec.address');
    const ok = computeRegistryEndpointStatus(endpointWorld(ep));
    const again = computeRegistryEndpointStatus(
      endpointWorld({ ...ep, status: ok.status as unknown as Record<string, unknown> }, { now: LATER }),
    );
    expect(again.status).toEqual(ok.status);
  });
});

describe('RegistryService status', () => {
  it('lists its ready endpoints sorted, with effective annotations, leaving out invalid and deleting ones', () => {
    const svc = registryService('payments', SVC).build();
    const b = registryEndpoint('b', `${SVC}/endpoints/b`, {
      address: '10.0.0.2',
      port: 443,
      annotations: { 'endpoint-operator.dev/hidden': 'x', 'example.com/zone': 'a' },
    }).build();
    const a = registryEndpoint('a', `${SVC}/endpoints/a`, { address: '2001:db8::1', port: 80 }).build();
    const bad = registryEndpoint('c', `${SVC}/endpoints/c`, { address: '8.8.8' }).build();
    const gone = registryEndpoint('d', `${SVC}/endpoints/d`).deleting().build();
    const { status, verdict } = computeRegistryServiceStatus({
      service: svc,
      endpoints: [b, bad, a, gone],
      specErrors: [],
      endpointErrors: (e) =>
        e.metadata.name === 'c'
          ? [{ field: 'spec.address', type: 'FieldValueInvalid', value: '8.8.8', detail: 'x' }]
          : [],
      reservedPrefixes: PREFIXES,
      now: NOW,
    });
    expect(verdict).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(status.endpoints).toEqual([
      { name: `${SVC}/endpoints/a`, address: '2001:db8::1', port: 80 },
      { name: `${SVC}/endpoints/b`, address: '10.0.0.2', port: 443, annotations: { 'example.com/zone': 'a' } },
    ]);
  });

  it('reports InvalidSpec for its own errors', () => {
    const { verdict } = computeRegistryServiceStatus({
      service: registryService('s', 'bad').build(),
      endpoints: [],
      specErrors: [{ field: 'spec.name', type: 'FieldValueInvalid', value: 'bad', detail: 'must be projects/...' }],
      endpointErrors: () => [],
      reservedPrefixes: PREFIXES,
      now: NOW,
    });
    expect(verdict).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
  });
});
