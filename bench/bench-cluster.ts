/**
 * A control plane of a benchmark's own, with the CRDs installed (their conversion pointing nowhere: the
 * benches that need it start the webhooks) and the namespaces it asks for, stopped when the bench is done,
 * and also when it overruns its time (then the process exits 2).
 */
import { allKinds } from '../src/api/kinds.js';
import { startControlPlane, type ControlPlane } from '../dev/cluster/index.js';
import { installCrds } from '../src/operator/crds.js';
import { KubeClient } from '../src/kube/kube-client.js';

export const NAMESPACES = { group: '', version: 'v1', plural: 'namespaces', namespaced: false } as const;

export interface BenchCluster {
  readonly plane: ControlPlane;
  readonly client: KubeClient;
}

export async function withBenchCluster<T>(
  timeoutSeconds: number,
  namespaces: readonly string[],
  bench: (cluster: BenchCluster) => Promise<T>,
): Promise<T> {
  let plane: ControlPlane | undefined;
  const timer = setTimeout(() => {
    console.error(`benchmark exceeded ${timeoutSeconds} s; stopping`);
    void (plane?.stop() ?? Promise.resolve()).finally(() => process.exit(2));
  }, timeoutSeconds * 1000);
  try {
    plane = await startControlPlane({ watchCache: true, log: (l) => console.error(`[control plane] ${l}`) });
    const client = KubeClient.fromKubeconfig(plane.kubeconfigPath);
    try {
      await installCrds(client, {
        kinds: allKinds,
        crdOptions: { conversion: { url: 'https://127.0.0.1:9/convert' } },
      });
      for (const name of namespaces)
        await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      return await bench({ plane, client });
    } finally {
      client.close();
    }
  } finally {
    clearTimeout(timer);
    await plane?.stop();
  }
}
