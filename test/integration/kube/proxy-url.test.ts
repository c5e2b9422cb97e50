/**
 * kubeconfig `proxy-url`: every connection of the client tunnels through the proxy with HTTP CONNECT, and
 * TLS to the real apiserver (its CA, its name) runs inside the tunnel. The proxy is a few lines of node:http on
 * loopback that records each CONNECT target and pipes the bytes; the apiserver is the test cluster's.
 */
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coreResources } from '../../../src/api/common/kube-object.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { createTestNamespace, testCluster } from '../../support/cluster.js';

interface Kubeconfig {
  clusters: { name: string; cluster: Record<string, unknown> }[];
}

/** An HTTP CONNECT proxy on loopback: it records each tunnel's target and pipes the bytes both ways. */
function startConnectProxy(): Promise<{ server: Server; url: string; tunnels: string[]; sockets: Set<Socket> }> {
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req, client: Socket, head: Buffer) => {
    const target = req.url ?? '';
    tunnels.push(target);
    const colon = target.lastIndexOf(':');
    const upstream = connect(Number(target.slice(colon + 1)), target.slice(0, colon).replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}`, tunnels, sockets });
    }),
  );
}

describe('kubeconfig proxy-url', () => {
  let proxy: Awaited<ReturnType<typeof startConnectProxy>>;
  let dir: string;
  let client: KubeClient;
  let ns: string;

  beforeAll(async () => {
    proxy = await startConnectProxy();
    dir = await mkdtemp(join(tmpdir(), 'eo-proxy-url-'));
    const config = yaml.load(await readFile(testCluster().kubeconfig, 'utf8')) as Kubeconfig;
    for (const c of config.clusters) c.cluster['proxy-url'] = proxy.url;
    await writeFile(join(dir, 'kubeconfig'), yaml.dump(config));
    client = KubeClient.fromKubeconfig(join(dir, 'kubeconfig'));
    ns = await createTestNamespace('proxy-url');
  });
  afterAll(async () => {
    client.close();
    for (const s of proxy.sockets) s.destroy();
    await new Promise((r) => proxy.server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('reaches the apiserver through the proxy: a write and a read, with TLS verified inside the tunnel', async () => {
    const server = new URL(testCluster().server);
    const cms = coreResources.configMaps;
    await client.create(cms, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'via-proxy' },
      data: { a: '1' },
    });
    expect(
      (await client.get<{ data?: Record<string, string> } & { metadata: object }>(cms, ns, 'via-proxy'))?.data,
    ).toEqual({ a: '1' });
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(new Set(proxy.tunnels)).toEqual(new Set([`${server.hostname}:${server.port}`]));
  });

  it('fails when the proxy is gone, rather than going around it', async () => {
    const closed = await startConnectProxy();
    const config = yaml.load(await readFile(join(dir, 'kubeconfig'), 'utf8')) as Kubeconfig;
    await new Promise((r) => closed.server.close(r));
    for (const c of config.clusters) c.cluster['proxy-url'] = closed.url;
    await writeFile(join(dir, 'gone'), yaml.dump(config));
    const direct = KubeClient.fromKubeconfig(join(dir, 'gone'));
    try {
      await expect(direct.get(coreResources.namespaces, undefined, ns)).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      direct.close();
    }
  });
});
