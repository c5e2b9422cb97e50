/**
 * Registry resolution end to end on a real kube-apiserver: the lookup API served over loopback HTTP by the
 * gateway (`GatewayServer`, as `endpoint-operator gateway` runs it), the `resolve` CLI, one owner per name across namespaces, and the cluster DNS
 * projection (headless Service + EndpointSlices) driven with kubectl as a user would.
 */
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayServer } from '../../../src/gateway/server.js';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import { runCli } from '../../support/cli.js';
import { createTestNamespace, kubectl, testCluster } from '../../support/cluster.js';
import {
  apply,
  eventually,
  getJson,
  installCrds,
  readyOf,
  runOperator,
  testClient,
  type TestOperator,
} from '../reconcilers/harness.js';
import { NO_AUTH } from '../../../src/gateway/auth/settings.js';

const run = randomBytes(3).toString('hex');
const serviceName = (id: string): string =>
  `projects/demo-project/locations/europe-west4/namespaces/shop/services/${id}-${run}`;

function registryYaml(
  rsName: string,
  id: string,
  endpoints: { id: string; address: string; port: number; annotations?: Record<string, string> }[],
  dns = false,
): string {
  const svc = serviceName(id);
  return [
    `apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryService
metadata: { name: ${rsName} }
spec:
  name: ${svc}${dns ? '\n  dns: { enabled: true }' : ''}`,
    ...endpoints.map(
      (e) => `apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryEndpoint
metadata: { name: ${rsName}-${e.id} }
spec:
  name: ${svc}/endpoints/${e.id}
  address: "${e.address}"
  port: ${e.port}
  annotations: ${JSON.stringify(e.annotations ?? {})}`,
    ),
  ].join('\n---\n');
}

interface SliceJson {
  metadata: { name: string; resourceVersion: string; labels?: Record<string, string> };
  addressType: string;
  ports?: { name: string; port: number }[];
  endpoints?: { addresses: string[]; hostname?: string }[];
}

async function slicesOf(ns: string, service: string): Promise<SliceJson[]> {
  const r = await kubectl([
    'get',
    '-n',
    ns,
    'endpointslices.discovery.k8s.io',
    '-l',
    `kubernetes.io/service-name=${service}`,
    '-o',
    'json',
  ]);
  if (r.code !== 0) throw new Error(r.stderr);
  return (JSON.parse(r.stdout) as { items: SliceJson[] }).items;
}

const addressesIn = (slices: SliceJson[]): string[] =>
  slices.flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses)).sort();

describe('registry resolution and cluster DNS on a real apiserver', () => {
  let ns: string;
  let ns2: string;
  let op: TestOperator;
  let client: KubeClient;
  let gateway: GatewayServer;
  let base: string;

  beforeAll(async () => {
    client = testClient();
    await installCrds(client);
    ns = await createTestNamespace('resolve');
    ns2 = await createTestNamespace('resolve-other');
    op = await runOperator(ns, { namespaces: [ns, ns2] });
    gateway = await GatewayServer.create({
      client,
      namespaces: [],
      listen: { host: '127.0.0.1', port: 0 },
      log: pino({ level: 'silent' }),
      auth: NO_AUTH,
    });
    const { port } = await gateway.start();
    base = `http://127.0.0.1:${port}`;
  }, 120_000);

  afterAll(async () => {
    await gateway?.close();
    await op?.stop();
    client?.close();
  });

  const resolve = async (
    id: string,
    body: Record<string, unknown>,
  ): Promise<{
    status: number;
    json: {
      service?: {
        endpoints?: { name: string; address?: string; port?: number; annotations?: Record<string, string> }[];
      };
      error?: { code: number; status: string; message: string };
    };
  }> => {
    const res = await fetch(`${base}/v1/${serviceName(id)}:resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as never };
  };

  it('resolves with a filter over HTTP and follows an endpoint change within 1 s', async () => {
    await apply(
      ns,
      registryYaml('pay', 'pay', [
        {
          id: 'a',
          address: '10.1.0.1',
          port: 8080,
          annotations: { protocol: 'grpc', 'endpoint-operator.dev/internal': 'x' },
        },
        { id: 'b', address: '10.1.0.2', port: 8080, annotations: { protocol: 'http' } },
        { id: 'c', address: '2001:db8::3', port: 9090, annotations: { protocol: 'grpc' } },
      ]),
    );
    const both = await eventually('both grpc endpoints to resolve', async () => {
      const r = await resolve('pay', { endpointFilter: 'annotations.protocol=grpc' });
      return r.json.service?.endpoints?.length === 2 ? r.json.service.endpoints : undefined;
    });
    expect(both.map((e) => [e.address, e.port, e.annotations])).toEqual([
      ['10.1.0.1', 8080, { protocol: 'grpc' }],
      ['2001:db8::3', 9090, { protocol: 'grpc' }],
    ]);
    const bad = await resolve('pay', { endpointFilter: 'port=8080 and port=9090' });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
      message: expect.stringContaining('position 11'),
    });

    // Change b to grpc: the lookup must see it within a second of the API server accepting the write.
    const patched = await kubectl([
      'patch',
      '-n',
      ns,
      'registryendpoint',
      'pay-b',
      '--type=merge',
      '-p',
      '{"spec":{"annotations":{"protocol":"grpc"}}}',
    ]);
    expect(patched.code, patched.stderr).toBe(0);
    const t0 = Date.now();
    await eventually(
      'the change to resolve',
      async () =>
        (await resolve('pay', { endpointFilter: 'annotations.protocol=grpc' })).json.service?.endpoints?.length === 3,
      1000,
    );
    expect(Date.now() - t0).toBeLessThanOrEqual(1000);

    // The CLI answers the same from the cluster.
    const cli = await runCli([
      'resolve',
      serviceName('pay'),
      '--filter',
      'port>=9000',
      '--max',
      '5',
      '--kubeconfig',
      testCluster().kubeconfig,
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(
      (JSON.parse(cli.stdout) as { service: { endpoints: { address: string }[] } }).service.endpoints.map(
        (e) => e.address,
      ),
    ).toEqual(['2001:db8::3']);
    const cliBad = await runCli([
      'resolve',
      serviceName('pay'),
      '--filter',
      'port=',
      '--kubeconfig',
      testCluster().kubeconfig,
    ]);
    expect(cliBad.code).toBe(2);
    expect(cliBad.stderr).toContain('position 6');
  });

  it('projects a DNS opt-in into a headless Service and EndpointSlices: created, updated, corrected after hand edits, removed on opt-out', async () => {
    const id = `orders-${run}`;
    await apply(
      ns,
      registryYaml(
        'orders',
        'orders',
        [
          { id: 'a', address: '10.2.0.1', port: 8080 },
          { id: 'b', address: '10.2.0.2', port: 8080 },
          { id: 'v6', address: '2001:db8::9', port: 8080 },
        ],
        true,
      ),
    );
    const svc = await eventually('the projected Service', async () => {
      const r = await kubectl(['get', '-n', ns, 'service', id, '-o', 'json']);
      return r.code === 0
        ? (JSON.parse(r.stdout) as {
            spec: { clusterIP: string; selector?: unknown; ports: { name: string; port: number }[] };
            metadata: { ownerReferences?: { kind: string; name: string }[] };
          })
        : undefined;
    });
    expect(svc.spec.clusterIP).toBe('None');
    expect(svc.spec.selector).toBeUndefined();
    expect(svc.spec.ports.map((p) => [p.name, p.port])).toEqual([['port-8080', 8080]]);
    expect(svc.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'RegistryService', name: 'orders', controller: true }),
    ]);
    let slices = await eventually('slices with the three addresses', async () => {
      const s = await slicesOf(ns, id);
      return addressesIn(s).length === 3 ? s : undefined;
    });
    expect(slices.map((s) => s.addressType).sort()).toEqual(['IPv4', 'IPv6']);
    expect(
      slices.every(
        (s) => s.metadata.labels?.['endpointslice.kubernetes.io/managed-by'] === 'registry-dns.endpoint-operator.dev',
      ),
    ).toBe(true);
    expect(slices.flatMap((s) => (s.endpoints ?? []).map((e) => e.hostname)).sort()).toEqual(['a', 'b', 'v6']);
    const ready = readyOf(await getJson(ns, 'registryservice/orders'));
    expect(ready).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
      message: expect.stringContaining(`in cluster DNS as ${id}.${ns}.svc`),
    });

    // An endpoint changes: only the IPv4 slice is rewritten.
    const v6Before = slices.find((s) => s.addressType === 'IPv6')?.metadata.resourceVersion;
    const patched = await kubectl([
      'patch',
      '-n',
      ns,
      'registryendpoint',
      'orders-b',
      '--type=merge',
      '-p',
      '{"spec":{"address":"10.2.0.22"}}',
    ]);
    expect(patched.code, patched.stderr).toBe(0);
    slices = await eventually(
      'the new address in the slice',
      async () => {
        const s = await slicesOf(ns, id);
        return addressesIn(s).includes('10.2.0.22') ? s : undefined;
      },
      5000,
    );
    expect(addressesIn(slices)).toEqual(['10.2.0.1', '10.2.0.22', '2001:db8::9']);
    expect(slices.find((s) => s.addressType === 'IPv6')?.metadata.resourceVersion).toBe(v6Before);

    // Hand edits are reverted: a slice's endpoints, and a selector added to the Service.
    const v4 = slices.find((s) => s.addressType === 'IPv4')?.metadata.name ?? '';
    const edit = await kubectl([
      'patch',
      '-n',
      ns,
      'endpointslice',
      v4,
      '--type=merge',
      '-p',
      '{"endpoints":[{"addresses":["10.66.6.6"]}]}',
    ]);
    expect(edit.code, edit.stderr).toBe(0);
    await eventually(
      'the slice to be corrected',
      async () => {
        const s = await slicesOf(ns, id);
        const a = addressesIn(s);
        return a.length === 3 && a.includes('10.2.0.1') && !a.includes('10.66.6.6');
      },
      5000,
    );
    const sel = await kubectl([
      'patch',
      '-n',
      ns,
      'service',
      id,
      '--type=merge',
      '-p',
      '{"spec":{"selector":{"app":"hijack"}}}',
    ]);
    expect(sel.code, sel.stderr).toBe(0);
    await eventually(
      'the selector to be removed',
      async () => {
        const r = await kubectl(['get', '-n', ns, 'service', id, '-o', 'jsonpath={.spec.selector}']);
        return r.code === 0 && r.stdout.trim() === '';
      },
      5000,
    );

    // Opting out removes the Service and every slice.
    const off = await kubectl([
      'patch',
      '-n',
      ns,
      'registryservice',
      'orders',
      '--type=merge',
      '-p',
      '{"spec":{"dns":{"enabled":false}}}',
    ]);
    expect(off.code, off.stderr).toBe(0);
    await eventually(
      'the projection to be removed',
      async () => {
        const r = await kubectl(['get', '-n', ns, 'service', id]);
        return r.code !== 0 && (await slicesOf(ns, id)).length === 0;
      },
      10_000,
    );
  });

  it('leaves a foreign Service of the same name alone and reports it', async () => {
    const id = `legacy-${run}`;
    const created = await kubectl(['create', 'service', 'clusterip', id, '-n', ns, '--tcp=80:8080']);
    expect(created.code, created.stderr).toBe(0);
    const before = await getJson(ns, `service/${id}`);
    await apply(ns, registryYaml('legacy', 'legacy', [{ id: 'a', address: '10.3.0.1', port: 80 }], true));
    const ready = await eventually('DnsServiceConflict', async () => {
      const r = readyOf(await getJson(ns, 'registryservice/legacy'));
      return r?.reason === 'DnsServiceConflict' ? r : undefined;
    });
    expect(ready).toMatchObject({ status: 'False', message: expect.stringContaining(`Service "${id}"`) });
    const after = await getJson(ns, `service/${id}`);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    // Its slices are the EndpointSlice controller's (it has a selector); none is the operator's.
    expect(
      (await slicesOf(ns, id)).filter(
        (s) => s.metadata.labels?.['endpointslice.kubernetes.io/managed-by'] !== 'endpointslice-controller.k8s.io',
      ),
    ).toEqual([]);
    // The registry still resolves; only DNS is refused.
    expect((await resolve('legacy', {})).json.service?.endpoints?.map((e) => e.address)).toEqual(['10.3.0.1']);
  });

  it('reports two RegistryServices claiming one name; the older resolves, the next takes over when it goes', async () => {
    await apply(ns, registryYaml('dup', 'dup', [{ id: 'old', address: '10.4.0.1', port: 80 }]));
    await eventually(
      'the first claimant to be Ready',
      async () => readyOf(await getJson(ns, 'registryservice/dup'))?.status === 'True',
    );
    await new Promise((r) => setTimeout(r, 1100)); // creationTimestamp has one-second resolution
    await apply(ns2, registryYaml('dup', 'dup', [{ id: 'new', address: '10.4.0.2', port: 80 }]));
    const older = await eventually('NameConflict on the older', async () => {
      const r = readyOf(await getJson(ns, 'registryservice/dup'));
      return r?.reason === 'NameConflict' ? r : undefined;
    });
    expect(older.message).toContain(`${ns2}/dup`);
    const newer = await eventually('NameConflict on the newer', async () => {
      const r = readyOf(await getJson(ns2, 'registryservice/dup'));
      return r?.reason === 'NameConflict' ? r : undefined;
    });
    expect(newer.message).toContain(`${ns}/dup`);
    await eventually(
      'the older to resolve',
      async () => (await resolve('dup', {})).json.service?.endpoints?.[0]?.address === '10.4.0.1',
    );

    const del = await kubectl(['delete', '-n', ns, 'registryservice', 'dup', '--wait=true']);
    expect(del.code, del.stderr).toBe(0);
    await eventually(
      'the newer to take over',
      async () => readyOf(await getJson(ns2, 'registryservice/dup'))?.status === 'True',
    );
    await eventually(
      'the newer to resolve',
      async () => (await resolve('dup', {})).json.service?.endpoints?.[0]?.address === '10.4.0.2',
      2000,
    );
  });

  // Last: it stops the operator.
  it('leaves nothing behind when a RegistryService is deleted, even with the operator stopped: the garbage collector follows ownerReferences', async () => {
    const id = `gone-${run}`;
    await apply(ns, registryYaml('gone', 'gone', [{ id: 'a', address: '10.5.0.1', port: 80 }], true));
    await eventually(
      'the projected Service and slice',
      async () =>
        (await kubectl(['get', '-n', ns, 'service', id])).code === 0 &&
        addressesIn(await slicesOf(ns, id)).length === 1,
    );
    await op.stop();
    const del = await kubectl(['delete', '-n', ns, 'registryservice', 'gone']);
    expect(del.code, del.stderr).toBe(0);
    await eventually(
      'kube-controller-manager to collect the Service and its slices',
      async () => (await kubectl(['get', '-n', ns, 'service', id])).code !== 0 && (await slicesOf(ns, id)).length === 0,
      30_000,
    );
  });
});
