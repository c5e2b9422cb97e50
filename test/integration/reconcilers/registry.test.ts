import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { startWebhookHarness } from '../webhook/harness.js';
import { loadExamples } from '../../support/examples.js';
import {
  apply,
  eventually,
  examplesIn,
  getJson,
  readyOf,
  runOperatorWithCrds,
  waitReady,
  type TestOperator,
} from './harness.js';

// Its own service: the examples applied before hold a RegistryService `checkout` whose spec.name is immutable.
const SVC = 'projects/demo-project/locations/europe-west4/namespaces/shop/services/late-checkout';

describe('registry reconcilers on a real apiserver', () => {
  let ns: string;
  let op: TestOperator;

  beforeAll(async () => {
    ns = await createTestNamespace('reconcile-registry');
    op = await runOperatorWithCrds(ns);
  });

  afterAll(async () => {
    await op?.stop();
  });

  // v1beta1 examples need the conversion webhook, which this suite does not run; v1 ones are applied.
  const v1Examples = loadExamples('valid').filter((f) => f.path.includes('/registry/') && !f.text.includes('/v1beta1'));
  it.skipIf(v1Examples.length === 0)('converges the valid v1 examples to Ready', async () => {
    await apply(
      ns,
      examplesIn('registry', ns)
        .split('---\n')
        .filter((d) => !d.includes('/v1beta1'))
        .join('---\n'),
    );
    await waitReady(ns, 'registryservices,registryendpoints --all');
  });

  it('converges every valid example, v1beta1 included, with the conversion webhook running', async () => {
    const webhooks = await startWebhookHarness();
    try {
      await apply(ns, examplesIn('registry', ns));
      await waitReady(ns, 'registryservices,registryendpoints --all');
      const beta = await kubectl([
        'get',
        '-n',
        ns,
        'registryendpoints.v1beta1.registry.endpoint-operator.dev/checkout-3',
        '-o',
        'json',
      ]);
      expect(beta.code, beta.stderr).toBe(0);
      const obj = JSON.parse(beta.stdout) as {
        spec: { network?: string };
        status?: { conditions?: Array<{ type: string; status: string }> };
      };
      expect(obj.spec.network).toBe('projects/418832410291/locations/global/networks/shop-vpc');
      expect(obj.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    } finally {
      await webhooks.stop();
    }
  });

  it('keeps an endpoint applied before its service at ParentNotFound, then lists it once the service exists', async () => {
    await apply(
      ns,
      `
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata: { name: checkout-b }
spec:
  name: ${SVC}/endpoints/b
  address: 2001:db8::2
  port: 8443
  annotations: { example.com/zone: b, endpoint-operator.dev/internal: hidden }
---
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata: { name: checkout-a }
spec: { name: ${SVC}/endpoints/a, address: 10.1.0.1, port: 443 }
`,
    );
    await eventually(
      'ParentNotFound',
      async () => readyOf(await getJson(ns, 'registryendpoint/checkout-b'))?.reason === 'ParentNotFound',
    );
    expect(readyOf(await getJson(ns, 'registryendpoint/checkout-b'))?.message).toContain(SVC);
    await apply(
      ns,
      `
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryService
metadata: { name: late-checkout }
spec: { name: ${SVC} }
`,
    );
    await waitReady(ns, 'registryendpoint/checkout-a registryendpoint/checkout-b registryservice/late-checkout');
    const svc = await getJson(ns, 'registryservice/late-checkout');
    await eventually(
      'both endpoints listed',
      async () =>
        ((await getJson(ns, 'registryservice/late-checkout')).status?.endpoints as unknown[] | undefined)?.length === 2,
    );
    expect((await getJson(ns, 'registryservice/late-checkout')).status?.endpoints).toEqual([
      { name: `${SVC}/endpoints/a`, address: '10.1.0.1', port: 443 },
      { name: `${SVC}/endpoints/b`, address: '2001:db8::2', port: 8443, annotations: { 'example.com/zone': 'b' } },
    ]);
    expect(readyOf(svc)).toMatchObject({ status: 'True', observedGeneration: svc.metadata.generation });
  });
});
