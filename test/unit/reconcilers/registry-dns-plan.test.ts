import { describe, expect, it } from 'vitest';
import { nameClaims } from '../../../src/api/registry/name-owner.js';
import {
  DNS_MANAGED_BY,
  planSlices,
  serviceDiffers,
  serviceManifest,
  sliceDiffers,
  sliceManifest,
  overlay,
  type DnsEndpoint,
  type RegistryServiceRef,
} from '../../../src/reconcilers/registry-dns-plan.js';
import { computeRegistryServiceStatus } from '../../../src/reconcilers/registry-status.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { registryEndpoint, registryService } from './fixtures.js';

const SVC = 'projects/my-shop/locations/us-east1/namespaces/shop/services/checkout';
const rs: RegistryServiceRef = { name: 'checkout-rs', namespace: 'shop', uid: 'rs-uid', serviceName: SVC };

function eps(n: number, port = 8080, base = 0): DnsEndpoint[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `e${base + i}`,
    address: `10.0.${Math.floor((base + i) / 200)}.${((base + i) % 200) + 1}`,
    port,
  }));
}

/** The slices as the API server would hold them after the plan was applied. */
function apply(endpoints: DnsEndpoint[], live: KubeObject[], max = 3): KubeObject[] {
  return planSlices('checkout', endpoints, live, max).map((p) => sliceManifest(rs, p));
}

describe('DNS projection plan', () => {
  it('builds a headless selector-less Service with one named port per distinct port, owned by the RegistryService', () => {
    const svc = serviceManifest(rs, [
      ...eps(2, 8080),
      ...eps(1, 9090, 5),
      { id: 'noport', address: '10.9.9.9', port: 0 },
      { id: 'noaddr', address: '', port: 7070 },
    ]);
    expect(svc.metadata).toMatchObject({
      name: 'checkout',
      namespace: 'shop',
      ownerReferences: [{ kind: 'RegistryService', name: 'checkout-rs', uid: 'rs-uid', controller: true }],
    });
    expect(svc.spec).toEqual({
      clusterIP: 'None',
      ports: [
        { name: 'port-8080', port: 8080, targetPort: 8080, protocol: 'TCP' },
        { name: 'port-9090', port: 9090, targetPort: 9090, protocol: 'TCP' },
      ],
    });
  });

  it('puts one address family and one port in each slice, with the labels CoreDNS and kube-proxy select by', () => {
    const slices = apply(
      [...eps(2, 8080), { id: 'v6', address: '2001:db8::1', port: 8080 }, ...eps(1, 9090, 7)],
      [],
      100,
    );
    expect(
      slices.map((s) => [
        s.metadata.name,
        s.addressType,
        (s.ports as { port: number }[]).map((p) => p.port),
        (s.endpoints as unknown[]).length,
      ]),
    ).toEqual([
      ['checkout-ipv4-8080-0', 'IPv4', [8080], 2],
      ['checkout-ipv4-9090-0', 'IPv4', [9090], 1],
      ['checkout-ipv6-8080-0', 'IPv6', [8080], 1],
    ]);
    expect(slices[0]?.metadata.labels).toEqual({
      'kubernetes.io/service-name': 'checkout',
      'endpointslice.kubernetes.io/managed-by': DNS_MANAGED_BY,
    });
    expect(slices[0]?.endpoints).toEqual([
      { addresses: ['10.0.0.1'], conditions: { ready: true }, hostname: 'e0' },
      { addresses: ['10.0.0.2'], conditions: { ready: true }, hostname: 'e1' },
    ]);
    expect(slices[0]?.ports).toEqual([{ name: 'port-8080', port: 8080, protocol: 'TCP' }]);
  });

  it('changes exactly one slice per endpoint change (stable placement)', () => {
    const before = apply(eps(9), []);
    expect(before).toHaveLength(3);
    const changed = (after: KubeObject[]): string[] =>
      [...new Set([...before, ...after].map((s) => s.metadata.name ?? ''))].filter((name) => {
        const a = before.find((s) => s.metadata.name === name);
        const b = after.find((s) => s.metadata.name === name);
        return a === undefined || b === undefined || sliceDiffers(a, b);
      });
    // remove one in the first slice: only that slice changes (no shifting of later ones)
    const removed = apply(
      eps(9).filter((e) => e.id !== 'e1'),
      before,
    );
    expect(changed(removed)).toEqual(['checkout-ipv4-8080-0']);
    // add one: goes to the slice with room
    const added = apply(
      [...eps(9).filter((e) => e.id !== 'e1'), { id: 'a0', address: '10.1.0.1', port: 8080 }],
      removed,
    );
    expect(changed(added)).toEqual(['checkout-ipv4-8080-0']);
    // change an address: one slice
    const moved = apply(
      eps(9).map((e) => (e.id === 'e7' ? { ...e, address: '10.2.0.7' } : e)),
      before,
    );
    expect(changed(moved)).toEqual(['checkout-ipv4-8080-2']);
    // unchanged: nothing
    expect(changed(apply(eps(9), before))).toEqual([]);
  });

  it('reverts a hand edit of a slice, keeping fields others added', () => {
    const [want] = apply(eps(2), [], 100);
    if (want === undefined) throw new Error('no slice');
    const edited: KubeObject = {
      ...want,
      metadata: { ...want.metadata, resourceVersion: '7', labels: { ...want.metadata.labels, team: 'x' } },
      endpoints: [{ addresses: ['10.66.0.1'], conditions: { ready: true }, hostname: 'e0' }],
    };
    const [replan] = apply(eps(2), [edited], 100);
    if (replan === undefined) throw new Error('no slice');
    expect(sliceDiffers(edited, replan)).toBe(true);
    const written = overlay(edited, replan);
    expect(written.endpoints).toEqual(want.endpoints);
    expect(written.metadata).toMatchObject({
      resourceVersion: '7',
      labels: { team: 'x', 'kubernetes.io/service-name': 'checkout' },
    });
    expect(sliceDiffers(written, replan)).toBe(false);
  });

  it('sees a Service with a selector or other ports as differing, and not the server defaults', () => {
    const want = serviceManifest(rs, eps(1));
    const stored: KubeObject = {
      ...want,
      spec: {
        clusterIP: 'None',
        clusterIPs: ['None'],
        type: 'ClusterIP',
        sessionAffinity: 'None',
        ports: [{ name: 'port-8080', protocol: 'TCP', port: 8080, targetPort: 8080 }],
      },
    };
    expect(serviceDiffers(stored, want)).toBe(false);
    expect(serviceDiffers({ ...stored, spec: { ...(stored.spec as object), selector: { app: 'x' } } }, want)).toBe(
      true,
    );
    expect(serviceDiffers({ ...stored, spec: { ...(stored.spec as object), ports: [] } }, want)).toBe(true);
    expect(serviceDiffers({ ...stored, metadata: { ...stored.metadata, ownerReferences: [] } }, want)).toBe(true);
    expect(
      (
        overlay({ ...stored, spec: { ...(stored.spec as object), selector: { app: 'x' } } }, want).spec as Record<
          string,
          unknown
        >
      ).selector,
    ).toBeUndefined();
  });
});

describe('one owner per name', () => {
  const older = registryService('a', SVC).inNamespace('team-a').created('2026-01-01T00:00:00Z').build();
  const newer = registryService('b', SVC).inNamespace('team-b').created('2026-03-01T00:00:00Z').build();
  const sameSecond = registryService('a', SVC).inNamespace('team-0').created('2026-03-01T00:00:00Z').build();

  it('gives the name to the oldest claim; ties by namespace and name', () => {
    expect(nameClaims([newer, older]).owner).toBe(older);
    expect(nameClaims([newer, sameSecond]).owner).toBe(sameSecond);
    expect(nameClaims([]).owner).toBeUndefined();
  });

  it('reports NameConflict on both claimants, naming the other and who resolves', () => {
    const claims = nameClaims([older, newer]);
    const status = (service: KubeObject): { reason: string; message: string; status: string } =>
      computeRegistryServiceStatus({
        service,
        endpoints: [],
        specErrors: [],
        endpointErrors: () => [],
        reservedPrefixes: [],
        now: '2026-04-01T00:00:00Z',
        claims,
      }).verdict;
    expect(status(older)).toMatchObject({
      status: 'False',
      reason: 'NameConflict',
      message: expect.stringContaining('team-b/b'),
    });
    expect(status(older).message).toContain('keeps resolving');
    expect(status(newer)).toMatchObject({
      status: 'False',
      reason: 'NameConflict',
      message: expect.stringContaining('team-a/a'),
    });
    expect(status(newer).message).toContain('does not resolve');
    const alone = computeRegistryServiceStatus({
      service: older,
      endpoints: [registryEndpoint('e', `${SVC}/endpoints/e`).build()],
      specErrors: [],
      endpointErrors: () => [],
      reservedPrefixes: [],
      now: '2026-04-01T00:00:00Z',
      claims: nameClaims([older]),
    }).verdict;
    expect(alone).toMatchObject({ status: 'True', reason: 'Reconciled', message: '1 ready endpoint(s)' });
  });

  it('folds the DNS outcome into Ready', () => {
    const dns = {
      status: 'False' as const,
      reason: 'DnsServiceConflict' as const,
      message: 'spec.dns: Service "checkout" ...',
    };
    expect(
      computeRegistryServiceStatus({
        service: older,
        endpoints: [],
        specErrors: [],
        endpointErrors: () => [],
        reservedPrefixes: [],
        now: '2026-04-01T00:00:00Z',
        dns,
      }).verdict,
    ).toEqual(dns);
    const ok = {
      status: 'True' as const,
      reason: 'Reconciled' as const,
      message: 'in cluster DNS as checkout.team-a.svc',
    };
    expect(
      computeRegistryServiceStatus({
        service: older,
        endpoints: [],
        specErrors: [],
        endpointErrors: () => [],
        reservedPrefixes: [],
        now: '2026-04-01T00:00:00Z',
        dns: ok,
      }).verdict.message,
    ).toBe('0 ready endpoint(s); in cluster DNS as checkout.team-a.svc');
  });
});
