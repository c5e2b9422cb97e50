/**
 * B7, DNS half: on a fresh local control plane with the operator running in-process, a RegistryService
 * with spec.dns and ENDPOINTS endpoints is projected; then CHANGES endpoint addresses are changed one at a
 * time (spaced wider than the projection's coalescing window, so each is its own change). For each: the
 * time from the API server accepting the endpoint change to a watch on the slices seeing the new address
 * (goal ≤ 1 s), and the slice writes it caused, counted as resourceVersion changes on that watch (goal:
 * exactly one per change).
 */
import { pino } from 'pino';
import { startControlPlane, type ControlPlane } from '../../dev/cluster/index.js';
import { installCrds } from '../../src/operator/crds.js';
import { startOperator } from '../../src/operator/start.js';
import { resources } from '../../src/api/kind-bindings.js';
import { endpointSlicesResource } from '../../src/runtime/endpoint-slices.js';
import { Informer, kubeListerWatcher } from '../../src/kube/informer.js';
import { KubeClient } from '../../src/kube/kube-client.js';
import type { KubeObject } from '../../src/api/common/kube-object.js';

const NS = 'bench-dns';
const SERVICE = 'projects/bench-project/locations/us-east1/namespaces/shop/services/dns-bench';

export interface DnsPhaseResult {
  readonly latenciesMs: number[];
  readonly writesPerChange: number[];
  readonly endpoints: number;
}

function addresses(slices: readonly KubeObject[]): Set<string> {
  const out = new Set<string>();
  for (const s of slices)
    for (const e of Array.isArray(s.endpoints) ? (s.endpoints as { addresses?: string[] }[]) : [])
      for (const a of e.addresses ?? []) out.add(a);
  return out;
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
  return performance.now();
}

export async function dnsPhase(endpoints: number, changes: number): Promise<DnsPhaseResult> {
  let plane: ControlPlane | undefined;
  const stopping = new AbortController();
  try {
    plane = await startControlPlane({ watchCache: true, log: (l) => console.error(`[control plane] ${l}`) });
    const client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
    await installCrds(client, { crdOptions: { conversion: { url: 'https://127.0.0.1:9/convert' } } });
    await client.create({ group: '', version: 'v1', plural: 'namespaces', namespaced: false }, undefined, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NS },
    });
    const operator = await startOperator({
      client,
      settings: {
        project: 'bench-project',
        location: 'us-east1',
        namespaces: [NS],
        workers: 4,
        leaderElection: { enabled: false, namespace: NS, leaseName: 'bench' },
      },
      log: pino({ level: 'silent' }),
    });
    await operator.ready;
    const slices = new Informer(kubeListerWatcher(client, endpointSlicesResource, NS), { name: 'bench/slices' });
    let writes = 0;
    slices.addEventHandler({
      onAdd: () => writes++,
      onUpdate: (a, b) => {
        if (a.metadata.resourceVersion !== b.metadata.resourceVersion) writes++;
      },
      onDelete: () => writes++,
    });
    void slices.run(stopping.signal);
    await slices.waitForSync(stopping.signal);

    await client.create(resources.registryServices, NS, {
      apiVersion: 'registry.endpoint-operator.dev/v1',
      kind: 'RegistryService',
      metadata: { name: 'dns-bench' },
      spec: { name: SERVICE, dns: { enabled: true } },
    });
    const address = (i: number, gen: number): string => `10.${gen}.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    for (let i = 0; i < endpoints; i++) {
      await client.create(resources.registryEndpoints, NS, {
        apiVersion: 'registry.endpoint-operator.dev/v1',
        kind: 'RegistryEndpoint',
        metadata: { name: `ep-${i}` },
        spec: { name: `${SERVICE}/endpoints/ep-${i}`, address: address(i, 0), port: 8080 },
      });
    }
    await until(`${endpoints} addresses in the slices`, () => addresses(slices.list()).size === endpoints, 60_000);
    await new Promise((r) => setTimeout(r, 1000)); // let the initial burst settle

    const latenciesMs: number[] = [];
    const writesPerChange: number[] = [];
    for (let c = 0; c < changes; c++) {
      const i = (c * 37) % endpoints;
      const next = address(i, c + 1);
      const before = writes;
      await client.patch(resources.registryEndpoints, NS, `ep-${i}`, { spec: { address: next } }, { type: 'merge' });
      const accepted = performance.now();
      const seen = await until(`address ${next} in a slice`, () => addresses(slices.list()).has(next), 10_000);
      latenciesMs.push(seen - accepted);
      // Wider than the projection's coalescing window: later writes for this change would show up here.
      await new Promise((r) => setTimeout(r, 400));
      writesPerChange.push(writes - before);
    }
    await operator.stop();
    client.close();
    return { latenciesMs, writesPerChange, endpoints };
  } finally {
    stopping.abort();
    await plane?.stop();
  }
}
