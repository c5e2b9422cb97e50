/**
 * The registry kinds on a real kube-apiserver with the operator's webhooks: the status schemas,
 * printer columns, short names, immutability through admission, and what survives which write
 * path across the two RegistryEndpoint versions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceRef } from '../../../src/api/common/kube-object.js';
import { CONVERSION_DATA_ANNOTATION, REGISTRY_GROUP } from '../../../src/api/registry/index.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { startWebhookHarness, type WebhookHarness } from '../webhook/harness.js';

let harness: WebhookHarness;
let ns: string;

beforeAll(async () => {
  harness = await startWebhookHarness();
  ns = await createTestNamespace('registry');
});

afterAll(async () => {
  await harness?.stop();
});

const SERVICE = 'projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout';
const endpoints = (version: string): ResourceRef => ({
  group: REGISTRY_GROUP,
  version,
  plural: 'registryendpoints',
  namespaced: true,
});
const services: ResourceRef = { group: REGISTRY_GROUP, version: 'v1', plural: 'registryservices', namespaced: true };
const apply = (yaml: string) => kubectl(['apply', '-n', ns, '--validate=false', '-f', '-'], { input: yaml });

const condition = {
  type: 'Ready',
  status: 'False',
  observedGeneration: 1,
  lastTransitionTime: '2026-11-22T05:00:00Z',
  reason: 'ParentNotFound',
  message: 'no RegistryService has spec.name ' + SERVICE,
};

describe('RegistryService', () => {
  it('is created, listed by short name and category, and shows its columns', async () => {
    const r = await apply(`
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryService
metadata:
  name: checkout
spec:
  name: ${SERVICE}
  annotations:
    tier: gold
`);
    expect(r.code, r.stderr).toBe(0);
    const got = await kubectl(['get', 'regsvc', '-n', ns]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout.split('\n')[0]).toMatch(/NAME\s+READY\s+REASON\s+SERVICE\s+AGE/);
    expect(got.stdout).toContain(SERVICE);
    const category = await kubectl(['get', 'endpoint-operator', '-n', ns, '-o', 'name']);
    expect(category.stdout).toContain('registryservice.registry.endpoint-operator.dev/checkout');
  });

  it('takes a status with resolved endpoints through the status subresource', async () => {
    const status = {
      endpoints: [
        {
          name: `${SERVICE}/endpoints/checkout-1`,
          address: '10.20.0.11',
          port: 8443,
          annotations: { protocol: 'https' },
        },
      ],
      effectiveAnnotations: { tier: 'gold' },
      observedGeneration: 1,
      conditions: [{ ...condition, status: 'True', reason: 'Reconciled', message: 'resolved 1 ready endpoint' }],
    };
    const written = await harness.client.patch<{ status: unknown }>(
      services,
      ns,
      'checkout',
      { status },
      { type: 'merge', subresource: 'status' },
    );
    expect(written.status).toEqual(status);
  });

  it('refuses a change of spec.name', async () => {
    const r = await kubectl([
      'patch',
      '-n',
      ns,
      'regsvc',
      'checkout',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { name: `${SERVICE}-v2` } }),
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.name: Invalid value: .*field is immutable/);
  });
});

describe('RegistryEndpoint', () => {
  const endpoint = `${SERVICE}/endpoints/checkout-1`;

  it('shows Ready, Reason, Address and Port, and the name with -o wide', async () => {
    const r = await apply(`
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata:
  name: checkout-1
spec:
  name: ${endpoint}
  address: 2001:db8:20::11
  port: 8443
`);
    expect(r.code, r.stderr).toBe(0);
    const got = await kubectl(['get', 'regep', '-n', ns]);
    expect(got.stdout.split('\n')[0]).toMatch(/NAME\s+READY\s+REASON\s+ADDRESS\s+PORT\s+AGE/);
    expect(got.stdout).toMatch(/checkout-1\s+2001:db8:20::11\s+8443/);
    const wide = await kubectl(['get', 'regep', '-n', ns, '-o', 'wide']);
    expect(wide.stdout).toContain(endpoint);
  });

  it('serves a v1 status as v1beta1 with the v1beta1 names', async () => {
    const status = { effectiveAnnotations: { protocol: 'https' }, observedGeneration: 1, conditions: [condition] };
    await harness.client.patch(endpoints('v1'), ns, 'checkout-1', { status }, { type: 'merge', subresource: 'status' });
    const beta = await harness.client.get<{ status: unknown; metadata: { annotations?: Record<string, string> } }>(
      endpoints('v1beta1'),
      ns,
      'checkout-1',
    );
    expect(beta?.status).toEqual({
      effectiveMetadata: { protocol: 'https' },
      observedGeneration: 1,
      conditions: [condition],
    });
    expect(beta?.metadata.annotations?.[CONVERSION_DATA_ANNOTATION]).toBeUndefined();
  });

  it('refuses adding spec.network through v1beta1 after creation', async () => {
    const r = await kubectl([
      'patch',
      '-n',
      ns,
      'registryendpoints.v1beta1.registry.endpoint-operator.dev',
      'checkout-1',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { network: 'projects/418832410291/locations/global/networks/shop-vpc' } }),
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.network: Invalid value: .*field is immutable \(was unset\)/);
  });

  it('stores status times written through the v1beta1 status subresource in v1, and keeps them across later v1 status writes', async () => {
    // Both versions carry createTime/updateTime, so the stored v1 object holds them directly and
    // no conversion annotation is needed for status (the /status strategy would drop metadata changes).
    await harness.client.patch(
      endpoints('v1beta1'),
      ns,
      'checkout-1',
      { status: { createTime: '2026-11-22T05:00:00Z', updateTime: '2026-11-22T05:01:00Z' } },
      { type: 'merge', subresource: 'status' },
    );
    const stored = await harness.client.get<{
      status?: Record<string, unknown>;
      metadata: { annotations?: Record<string, string> };
    }>(endpoints('v1'), ns, 'checkout-1');
    expect(stored?.status).toMatchObject({ createTime: '2026-11-22T05:00:00Z', updateTime: '2026-11-22T05:01:00Z' });
    expect(stored?.metadata.annotations?.[CONVERSION_DATA_ANNOTATION] ?? '').not.toContain('createTime');

    await harness.client.patch(
      endpoints('v1'),
      ns,
      'checkout-1',
      { status: { observedGeneration: 2 } },
      { type: 'merge', subresource: 'status' },
    );
    const beta = await harness.client.get<{
      status: Record<string, unknown>;
      metadata: { annotations?: Record<string, string> };
    }>(endpoints('v1beta1'), ns, 'checkout-1');
    expect(beta?.status).toMatchObject({
      createTime: '2026-11-22T05:00:00Z',
      updateTime: '2026-11-22T05:01:00Z',
      observedGeneration: 2,
      effectiveMetadata: { protocol: 'https' },
    });
    expect(beta?.metadata.annotations?.[CONVERSION_DATA_ANNOTATION]).toBeUndefined();
  });
});

describe('null means unset', () => {
  // kubectl's client-side apply turns a null into "delete the field" before it sends anything; server-side
  // apply sends the null as written, and a GitOps tool (Flux, Argo CD's ServerSideApply) does the same. In the
  // seed and in Google's JSON an unset port is 0 and an unset address "": null must read the same way.
  const manifest = (version: 'v1' | 'v1beta1', name: string): string => `
apiVersion: registry.endpoint-operator.dev/${version}
kind: RegistryEndpoint
metadata:
  name: ${name}
spec:
  name: ${SERVICE}/endpoints/${name}
  address: null
  port: null
`;

  it.each(['v1', 'v1beta1'] as const)(
    'server-side apply of a %s RegistryEndpoint with port: null and address: null is accepted, as client-side apply is',
    async (version) => {
      const client = await apply(manifest(version, `client-side-${version.toLowerCase()}`));
      expect(client.code, client.stderr).toBe(0);
      const name = `server-side-${version.toLowerCase()}`;
      const ssa = (): ReturnType<typeof kubectl> =>
        kubectl(['apply', '-n', ns, '--server-side', '--field-manager=gitops', '-f', '-'], {
          input: manifest(version, name),
        });
      const first = await ssa();
      expect(first.code, first.stderr).toBe(0);
      const read = async (): Promise<{ spec: Record<string, unknown>; metadata: { resourceVersion: string } }> => {
        const got = await kubectl([
          'get',
          '-n',
          ns,
          `registryendpoints.${version}.${REGISTRY_GROUP}/${name}`,
          '-o',
          'json',
        ]);
        expect(got.code, got.stderr).toBe(0);
        return JSON.parse(got.stdout) as { spec: Record<string, unknown>; metadata: { resourceVersion: string } };
      };
      const stored = await read();
      // Unset, as when the fields are left out: no value the seed does not give them.
      expect(stored.spec.port ?? 0).toBe(0);
      expect(stored.spec.address ?? '').toBe('');
      // Applied again, nothing changes (no drift for a GitOps tool to chase).
      const again = await ssa();
      expect(again.code, again.stderr).toBe(0);
      expect((await read()).metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
    },
  );
});
