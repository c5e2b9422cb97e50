import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, isExpired, reasonForHttpStatus } from '../../../src/kube/api-error.js';
import { connectionFromKubeconfig } from '../../../src/kube/cluster-connection.js';
import { KubeClient, parseWarningHeader, resourcePath } from '../../../src/kube/kube-client.js';
import { parseKubeconfig, selectContext } from '../../../src/kube/kubeconfig.js';

describe('resourcePath', () => {
  it('builds core, grouped, namespaced, cluster-scoped and subresource paths', () => {
    expect(resourcePath({ group: '', version: 'v1', plural: 'configmaps', namespaced: true }, 'ns', 'a')).toBe(
      '/api/v1/namespaces/ns/configmaps/a',
    );
    expect(resourcePath({ group: '', version: 'v1', plural: 'configmaps', namespaced: true }, undefined)).toBe(
      '/api/v1/configmaps',
    );
    expect(
      resourcePath(
        { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true },
        'kube-system',
        'x',
        'status',
      ),
    ).toBe('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x/status');
    expect(resourcePath({ group: '', version: 'v1', plural: 'namespaces', namespaced: false }, 'ignored', 'n1')).toBe(
      '/api/v1/namespaces/n1',
    );
  });
});

describe('errors and warnings', () => {
  it('parses RFC 7234 warning headers', () => {
    expect(parseWarningHeader('299 - "extensions/v1beta1 Ingress is deprecated"')).toBe(
      'extensions/v1beta1 Ingress is deprecated',
    );
    expect(parseWarningHeader('299 - "say \\"hi\\""')).toBe('say "hi"');
    expect(parseWarningHeader('not a warning')).toBe('not a warning');
  });

  it('takes the reason from a Status body, else from the HTTP code', () => {
    const withStatus = ApiError.fromResponse(
      'GET',
      '/x',
      410,
      { kind: 'Status', reason: 'Expired', message: 'too old resource version' },
      [],
    );
    expect(withStatus.reason).toBe('Expired');
    expect(withStatus.message).toContain('too old resource version');
    expect(isExpired(withStatus)).toBe(true);
    expect(ApiError.fromResponse('GET', '/x', 503, '<html>bad gateway</html>', []).reason).toBe('ServiceUnavailable');
    expect(reasonForHttpStatus(418)).toBe('Unknown');
  });
});

/** A tiny HTTP server standing in for a misbehaving apiserver (slow, huge, malformed). */
describe('KubeClient transport limits', () => {
  let server: http.Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  async function clientFor(
    handler: http.RequestListener,
    opts: ConstructorParameters<typeof KubeClient>[1] = {},
  ): Promise<KubeClient> {
    server = http.createServer(handler);
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', () => r()));
    const kubeconfig = parseKubeconfig(
      [
        'clusters: [{name: c, cluster: {server: "http://127.0.0.1:' +
          String((server.address() as AddressInfo).port) +
          '"}}]',
        'users: [{name: u, user: {token: secret-token}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
      '/virtual/kubeconfig',
    );
    return new KubeClient(connectionFromKubeconfig(selectContext(kubeconfig)), opts);
  }

  const cms = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };

  it('sends the bearer token and reports Warning headers with the error', async () => {
    let auth: string | undefined;
    const client = await clientFor((req, res) => {
      auth = req.headers.authorization;
      res
        .writeHead(409, { 'Content-Type': 'application/json', Warning: '299 - "careful"' })
        .end(JSON.stringify({ kind: 'Status', reason: 'Conflict', message: 'modified' }));
    });
    const err = await client.create(cms, 'ns', {}).catch((e: unknown) => e);
    expect(auth).toBe('Bearer secret-token');
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 409, reason: 'Conflict', warnings: ['careful'] });
    client.close();
  });

  it('fails a request that gets no answer within the timeout', async () => {
    const client = await clientFor(() => undefined, { requestTimeoutMs: 200 });
    await expect(client.get(cms, 'ns', 'slow')).rejects.toThrow(/no response within 200 ms/);
    client.close();
  });

  it('aborts a request in flight when its signal aborts, and sends none with an aborted signal', async () => {
    let received = 0;
    const client = await clientFor(
      () => {
        received++;
      },
      { requestTimeoutMs: 10_000 },
    );
    const ctl = new AbortController();
    const pending = client.patch(cms, 'ns', 'slow', { data: {} }, { type: 'merge', signal: ctl.signal });
    await new Promise((r) => setTimeout(r, 100));
    expect(received).toBe(1);
    const started = Date.now();
    ctl.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    expect(Date.now() - started).toBeLessThan(1_000);
    await expect(client.get(cms, 'ns', 'x', { signal: ctl.signal })).rejects.toThrow(/abort/i);
    await expect(client.list(cms, 'ns', { signal: ctl.signal })).rejects.toThrow(/abort/i);
    expect(received).toBe(1);
    client.close();
  });

  it('refuses a response larger than the limit', async () => {
    const client = await clientFor(
      (_req, res) =>
        res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ items: [], pad: 'x'.repeat(5000) })),
      { maxResponseBytes: 1000 },
    );
    await expect(client.list(cms, 'ns')).rejects.toThrow(/exceeds 1000 bytes/);
    client.close();
  });

  it('rejects a watch whose connection drops mid-stream (so the informer backs off)', async () => {
    const client = await clientFor((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n', () =>
        setTimeout(() => res.socket?.destroy(), 20),
      );
    });
    const seen: string[] = [];
    await expect(client.watch(cms, 'ns', {}, (e) => seen.push(e.type), new AbortController().signal)).rejects.toThrow(
      /aborted|closed mid-stream/,
    );
    expect(seen).toEqual(['ADDED']);
    client.close();
  });

  it('resolves a watch the server ends cleanly', async () => {
    const client = await clientFor((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}\n');
    });
    const seen: string[] = [];
    await client.watch(
      cms,
      'ns',
      { allowWatchBookmarks: true },
      (e) => seen.push(`${e.type}:${e.object.metadata.resourceVersion}`),
      new AbortController().signal,
      () => seen.push('open'),
    );
    expect(seen).toEqual(['open', 'BOOKMARK:9']);
    client.close();
  });

  it('does not report a watch as open when the server refuses it', async () => {
    const client = await clientFor((_req, res) =>
      res
        .writeHead(503, { 'Content-Type': 'application/json' })
        .end('{"kind":"Status","reason":"ServiceUnavailable","code":503}'),
    );
    let opened = false;
    await expect(
      client.watch(
        cms,
        'ns',
        {},
        () => undefined,
        new AbortController().signal,
        () => {
          opened = true;
        },
      ),
    ).rejects.toMatchObject({ status: 503 });
    expect(opened).toBe(false);
    client.close();
  });

  it('rejects a watch whose stream carries a malformed event', async () => {
    const client = await clientFor((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n');
      res.write('this is not json\n');
    });
    const seen: string[] = [];
    await expect(client.watch(cms, 'ns', {}, (e) => seen.push(e.type), new AbortController().signal)).rejects.toThrow(
      /malformed event/,
    );
    expect(seen).toEqual(['ADDED']);
    client.close();
  });
});
