/** KubeClient's use of the connection: TLS material, credential refresh, 401 → reload, exec client certificates. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadClusterConnection } from '../../../src/kube/cluster-connection.js';
import { ApiError, KubeClient } from '../../../src/kube/kube-client.js';
import { selfSignedClientCertificate, serverCertificates, startTlsServer } from './tls-fixtures.js';

const cms = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };
let dir = '';
const closers: (() => void)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kube-client-auth-'));
});
afterEach(() => {
  for (const close of closers.splice(0)) close();
  rmSync(dir, { recursive: true, force: true });
});

function kubeconfig(server: string, cluster: string, user: string): string {
  const path = join(dir, 'config');
  writeFileSync(
    path,
    [
      `clusters: [{name: c, cluster: {server: "${server}"${cluster}}}]`,
      `users: [{name: u, user: {${user}}}]`,
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n'),
  );
  return path;
}

function client(path: string): KubeClient {
  const c = new KubeClient(loadClusterConnection({ path, env: {} }));
  closers.push(() => c.close());
  return c;
}

describe('credential refresh', () => {
  it('keeps a token for CREDENTIAL_TTL_MS, but reloads it at once after a 401', async () => {
    const seen: string[] = [];
    let valid = 'Bearer original';
    const server = http.createServer((req, res) => {
      const auth = req.headers.authorization ?? '';
      seen.push(auth);
      const ok = auth === valid;
      res
        .writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' })
        .end(JSON.stringify(ok ? { metadata: { name: 'a' } } : { kind: 'Status', reason: 'Unauthorized' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    closers.push(() => server.close());
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'original');
    const c = client(kubeconfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, '', 'tokenFile: token'));
    expect(await c.get(cms, 'ns', 'a')).toEqual({ metadata: { name: 'a' } });
    // The token rotates and the old one is revoked: within the TTL the client has not looked yet; the 401 makes it look.
    writeFileSync(tokenFile, 'rotated');
    valid = 'Bearer rotated';
    const refused = await c.get(cms, 'ns', 'a').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 401 });
    expect(await c.get(cms, 'ns', 'a')).toEqual({ metadata: { name: 'a' } });
    expect(seen).toEqual(['Bearer original', 'Bearer original', 'Bearer rotated']);
  });
});

describe('TLS from the kubeconfig', () => {
  it('verifies the server with the CA and tls-server-name, and presents the client certificate (paths relative to the kubeconfig)', async () => {
    const bundle = await serverCertificates('api.cluster.test');
    const clientCert = await selfSignedClientCertificate('operator-cert');
    writeFileSync(join(dir, 'ca.crt'), bundle.caCert);
    writeFileSync(join(dir, 'client.crt'), clientCert.cert);
    writeFileSync(join(dir, 'client.key'), clientCert.key);
    const cns: (string | undefined)[] = [];
    const { server, url } = await startTlsServer(bundle, (cn, _req, res) => {
      cns.push(cn);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"items":[],"metadata":{"resourceVersion":"7"}}');
    });
    closers.push(() => server.close());
    const verified = client(
      kubeconfig(
        url,
        ', certificate-authority: ca.crt, tls-server-name: api.cluster.test',
        'client-certificate: client.crt, client-key: client.key',
      ),
    );
    expect((await verified.list(cms, 'ns')).resourceVersion).toBe('7');
    expect(cns).toEqual(['operator-cert']);
    // Without tls-server-name the certificate (for api.cluster.test) does not match 127.0.0.1.
    const mismatched = client(kubeconfig(url, ', certificate-authority: ca.crt', 'token: t'));
    await expect(mismatched.list(cms, 'ns')).rejects.toThrow(
      /altnames|does not match|IP: 127\.0\.0\.1 is not in the cert/i,
    );
    const untrusted = client(kubeconfig(url, ', tls-server-name: api.cluster.test', 'token: t'));
    await expect(untrusted.list(cms, 'ns')).rejects.toThrow(/self.signed|unable to (get|verify)/i);
  });

  it('switches to the new client certificate an exec plugin hands out after a 401', async () => {
    const bundle = await serverCertificates('api.cluster.test');
    writeFileSync(join(dir, 'ca.crt'), bundle.caCert);
    const certs = [await selfSignedClientCertificate('first'), await selfSignedClientCertificate('second')];
    writeFileSync(join(dir, 'certs.json'), JSON.stringify(certs));
    const pluginPath = join(dir, 'cert-plugin.mjs');
    // Each run hands out the next certificate of certs.json.
    writeFileSync(
      pluginPath,
      `#!${process.execPath}
import { appendFileSync, readFileSync } from 'node:fs';
const runs = new URL('./runs', import.meta.url);
appendFileSync(runs, 'x');
const c = JSON.parse(readFileSync(new URL('./certs.json', import.meta.url), 'utf8'))[readFileSync(runs, 'utf8').length - 1];
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { clientCertificateData: c.cert, clientKeyData: c.key } }));
`,
    );
    chmodSync(pluginPath, 0o755);
    const cns: (string | undefined)[] = [];
    const { server, url } = await startTlsServer(bundle, (cn, _req, res) => {
      cns.push(cn);
      if (cn === 'first')
        res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"kind":"Status","reason":"Unauthorized"}');
      else res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"metadata":{"name":"a"}}');
    });
    closers.push(() => server.close());
    const c = client(
      kubeconfig(
        url,
        ', certificate-authority: ca.crt, tls-server-name: api.cluster.test',
        'exec: {apiVersion: client.authentication.k8s.io/v1, command: ./cert-plugin.mjs, interactiveMode: Never}',
      ),
    );
    await expect(c.get(cms, 'ns', 'a')).rejects.toMatchObject({ status: 401 });
    expect(await c.get(cms, 'ns', 'a')).toEqual({ metadata: { name: 'a' } });
    expect(cns).toEqual(['first', 'second']);
  });
});
