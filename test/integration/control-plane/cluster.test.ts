/**
 * What the local cluster adds to an apiserver, proven the way users see it: kube-controller-manager and
 * kube-scheduler at work on kwok's simulated Nodes (Deployments become scheduled, Ready Pods and the Service's
 * EndpointSlices), garbage collection, namespace deletion and ClusterRole aggregation; and the addressing the
 * model servers need (the apiserver refuses loopback endpoints; simulated pods are unreachable at once; the
 * model host answers).
 */
import { connect } from 'node:net';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenInModelHost } from '../../../dev/cluster/model-host.js';
import { applyCallerRoles } from '../../support/service-accounts.js';
import { createTestNamespace, kubectl, testCluster } from '../../support/cluster.js';
import { eventually, installCrds, testClient } from '../reconcilers/harness.js';

async function json<T>(args: string[]): Promise<T> {
  const r = await kubectl([...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

interface PodJson {
  metadata: { name: string };
  spec: { nodeName?: string };
  status: { podIP?: string; conditions?: { type: string; status: string }[] };
}

describe('the local cluster', () => {
  let ns: string;
  beforeAll(async () => {
    ns = await createTestNamespace('cluster');
  });
  afterAll(async () => {
    await kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('has Ready simulated Nodes with the capacity it gave them', async () => {
    const nodes = await json<{
      items: {
        metadata: { name: string; labels: Record<string, string> };
        status: { capacity: Record<string, string>; conditions: { type: string; status: string }[] };
      }[];
    }>(['get', 'nodes']);
    expect(nodes.items.length).toBeGreaterThanOrEqual(2);
    for (const n of nodes.items) {
      expect(n.metadata.labels['kwok.x-k8s.io/node']).toBe('fake');
      expect(n.status.capacity).toMatchObject({ cpu: '8', memory: '32Gi' });
      expect(n.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
  });

  it('turns a Deployment into scheduled, Ready Pods and the Service into EndpointSlices of their addresses', async () => {
    expect(
      (
        await kubectl([
          'create',
          'deployment',
          'web',
          '-n',
          ns,
          '--image=registry.invalid/web:1',
          '--replicas=3',
          '--port=8080',
        ])
      ).code,
    ).toBe(0);
    expect((await kubectl(['expose', 'deployment', 'web', '-n', ns, '--port=80', '--target-port=8080'])).code).toBe(0);
    const rollout = await kubectl(['rollout', 'status', 'deployment/web', '-n', ns, '--timeout=60s']);
    expect(rollout.code, rollout.stderr).toBe(0);
    const pods = (await json<{ items: PodJson[] }>(['get', 'pods', '-n', ns, '-l', 'app=web'])).items;
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      expect(p.spec.nodeName).toMatch(/^kwok-node-/);
      expect(p.status.podIP).toMatch(/^198\.18\.\d+\.\d+$/);
      expect(p.status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
    const addresses = await eventually(
      "the Service's EndpointSlice lists the three pods",
      async () => {
        const slices = await json<{
          items: {
            metadata: { labels: Record<string, string> };
            endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
          }[];
        }>(['get', 'endpointslices', '-n', ns, '-l', 'kubernetes.io/service-name=web']);
        const ready = slices.items.flatMap((s) =>
          (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses),
        );
        return ready.length === 3
          ? { ready, managedBy: slices.items.map((s) => s.metadata.labels['endpointslice.kubernetes.io/managed-by']) }
          : undefined;
      },
      30_000,
    );
    expect(addresses.ready.sort()).toEqual(pods.map((p) => p.status.podIP).sort());
    expect(new Set(addresses.managedBy)).toEqual(new Set(['endpointslice-controller.k8s.io']));
  });

  it('fails a connection to a simulated pod at once: its address is routed nowhere, so nothing leaves the machine', async () => {
    const pod = (await json<{ items: PodJson[] }>(['get', 'pods', '-n', ns, '-l', 'app=web'])).items[0];
    const address = pod?.status.podIP ?? '198.18.0.1';
    const started = Date.now();
    const error = await new Promise<NodeJS.ErrnoException>((resolve) => {
      const socket = connect({ host: address, port: 8080, timeout: 5_000 });
      socket.once('error', (err) => resolve(err));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }));
      });
      socket.once('connect', () => {
        socket.destroy();
        resolve(Object.assign(new Error('connected'), { code: 'CONNECTED' }));
      });
    });
    expect(error.code).toBe('EHOSTUNREACH');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('refuses a loopback address in an EndpointSlice, which is why model servers listen in the model host', async () => {
    const slice = (address: string, name: string): string => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}, namespace: ${ns}, labels: { kubernetes.io/service-name: model } }
addressType: IPv4
ports: [{ name: http, port: 8080, protocol: TCP }]
endpoints: [{ addresses: ["${address}"] }]
`;
    const loopback = await kubectl(['apply', '-f', '-'], { input: slice('127.0.0.1', 'loopback') });
    expect(loopback.code).not.toBe(0);
    expect(loopback.stderr).toContain(
      'endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range',
    );
    const hosted = await kubectl(['apply', '-f', '-'], { input: slice(testCluster().modelHost.address, 'hosted') });
    expect(hosted.code, hosted.stderr).toBe(0);

    const server = http.createServer((_req, res) => res.end('from the model host'));
    await new Promise<void>(
      (resolve) => void listenInModelHost(testCluster().modelHost).then((socket) => server.listen(socket, resolve)),
    );
    try {
      const port = (server.address() as { port: number }).port;
      const answer = await fetch(`http://${testCluster().modelHost.address}:${port}/`);
      expect(await answer.text()).toBe('from the model host');
    } finally {
      server.close();
    }
  });

  it('collects garbage: deleting a Deployment removes its ReplicaSets and Pods', async () => {
    expect((await kubectl(['delete', 'deployment', 'web', '-n', ns, '--cascade=background'])).code).toBe(0);
    await eventually(
      'the ReplicaSets and Pods to be gone',
      async () => {
        const left = await json<{ items: unknown[] }>(['get', 'replicasets,pods', '-n', ns, '-l', 'app=web']);
        return left.items.length === 0;
      },
      30_000,
    );
  });

  it('finishes deleting a namespace', async () => {
    const doomed = await createTestNamespace('doomed');
    expect((await kubectl(['create', 'configmap', 'x', '-n', doomed])).code).toBe(0);
    const deleted = await kubectl(['delete', 'namespace', doomed, '--timeout=60s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await kubectl(['get', 'namespace', doomed])).code).not.toBe(0);
  });

  it('aggregates the shipped caller and reader ClusterRoles into admin, edit and view', async () => {
    // kubectl auth can-i maps a resource through discovery: the CRDs must be served.
    const client = testClient();
    await installCrds(client);
    client.close();
    await applyCallerRoles();
    const rulesOf = async (role: string): Promise<string[]> =>
      (
        await json<{ rules?: { resources?: string[]; verbs: string[] }[] }>(['get', 'clusterrole', role])
      ).rules?.flatMap((r) => (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${v} ${res}`))) ?? [];
    await eventually(
      'edit and admin gain predict',
      async () =>
        (await rulesOf('edit')).includes('predict predictionendpoints') &&
        (await rulesOf('admin')).includes('predict predictionendpoints'),
      30_000,
    );
    await eventually(
      'view gains resolve',
      async () => (await rulesOf('view')).includes('resolve registryservices'),
      30_000,
    );
    expect(await rulesOf('view')).not.toContain('predict predictionendpoints');
    const can = async (verb: string, resource: string, role: string): Promise<string> => {
      const bind = `agg-${role}`;
      await kubectl(['create', 'rolebinding', bind, '-n', ns, `--clusterrole=${role}`, `--user=${bind}-user`]);
      return (await kubectl(['auth', 'can-i', verb, resource, '-n', ns, `--as=${bind}-user`])).stdout.trim();
    };
    expect(await can('predict', 'predictionendpoints.prediction.endpoint-operator.dev', 'edit')).toBe('yes');
    expect(await can('resolve', 'registryservices.registry.endpoint-operator.dev', 'view')).toBe('yes');
    expect(await can('predict', 'predictionendpoints.prediction.endpoint-operator.dev', 'view')).toBe('no');
  });
});
