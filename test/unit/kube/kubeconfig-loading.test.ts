import { chmodSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  inClusterConnection,
  loadClusterConnection,
  type ClusterConnection,
} from '../../../src/kube/cluster-connection.js';

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kubeconfig-loading-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(relative: string, text: string): string {
  const path = join(dir, relative);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** A kubeconfig with one context `<name>` on cluster `<name>` at https://<name>:6443 and a token user. */
function single(name: string, extra: { cluster?: string; user?: string } = {}): string {
  return [
    `clusters: [{name: ${name}, cluster: {server: "https://${name}:6443"${extra.cluster ? `, ${extra.cluster}` : ''}}}]`,
    `users: [{name: ${name}, user: {${extra.user ?? `token: ${name}-token`}}}]`,
    `contexts: [{name: ${name}, context: {cluster: ${name}, user: ${name}, namespace: ${name}-ns}}]`,
    `current-context: ${name}`,
  ].join('\n');
}

async function authorization(connection: ClusterConnection, afresh = false): Promise<unknown> {
  return (await connection.credentials.credentials(afresh)).headers.Authorization;
}

/** A service-account directory as the kubelet mounts it. */
function serviceAccount(token = 'sa-token-1'): string {
  write('sa/token', `${token}\n`);
  write('sa/ca.crt', 'CA PEM');
  write('sa/namespace', 'operators');
  return join(dir, 'sa');
}

describe('loadClusterConnection: where the configuration comes from', () => {
  const inCluster = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

  it('prefers --kubeconfig, then $KUBECONFIG, then the service account, then ~/.kube/config', () => {
    const explicit = write('explicit', single('explicit'));
    const fromEnv = write('env', single('env'));
    write('home/.kube/config', single('home'));
    const saDir = serviceAccount();
    const home = join(dir, 'home');
    const load = (path: string | undefined, env: NodeJS.ProcessEnv): string =>
      loadClusterConnection({ ...(path !== undefined ? { path } : {}), env, serviceAccountDir: saDir, homeDir: home })
        .server;
    expect(load(explicit, { KUBECONFIG: fromEnv, ...inCluster })).toBe('https://explicit:6443');
    expect(load(undefined, { KUBECONFIG: fromEnv, ...inCluster })).toBe('https://env:6443');
    expect(load(undefined, inCluster)).toBe('https://10.96.0.1:443');
    expect(load(undefined, {})).toBe('https://home:6443');
    // KUBERNETES_SERVICE_HOST without a mounted token (automountServiceAccountToken: false) is not in-cluster.
    expect(
      loadClusterConnection({ env: inCluster, serviceAccountDir: join(dir, 'nothing'), homeDir: home }).server,
    ).toBe('https://home:6443');
  });

  it('merges the files of $KUBECONFIG, reading each entry’s files relative to its own kubeconfig', async () => {
    // a defines user b too, and no current-context: its user b wins, b's current-context is used.
    write(
      'a/config',
      'users: [{name: b, user: {token: b-from-a}}]\nclusters: [{name: a, cluster: {server: "https://a:6443"}}]',
    );
    write('b/certs/ca.crt', 'CA OF B');
    write('b/config', single('b', { cluster: 'certificate-authority: certs/ca.crt' }));
    const env = { KUBECONFIG: [join(dir, 'a/config'), join(dir, 'missing'), join(dir, 'b/config')].join(delimiter) };
    const connection = loadClusterConnection({ env });
    // current-context only in b; cluster b's relative CA path resolved against b/.
    expect(connection.server).toBe('https://b:6443');
    expect(connection.tls.ca?.toString()).toBe('CA OF B');
    expect(connection.namespace).toBe('b-ns');
    expect(await authorization(connection)).toBe('Bearer b-from-a');
  });

  it('reads a --kubeconfig equal to $KUBECONFIG as the list it is (the CLI fills the flag from the variable)', () => {
    write('a/config', single('a'));
    write('b/config', single('b'));
    const list = [join(dir, 'a/config'), join(dir, 'b/config')].join(delimiter);
    expect(loadClusterConnection({ path: list, env: { KUBECONFIG: list } }).server).toBe('https://a:6443');
    expect(() => loadClusterConnection({ path: list, env: {} })).toThrow(`cannot read kubeconfig ${list}`);
  });

  it('says what to do when there is no configuration at all', () => {
    const home = join(dir, 'empty-home');
    expect(() => loadClusterConnection({ env: {}, serviceAccountDir: join(dir, 'none'), homeDir: home })).toThrow(
      `no cluster configuration: pass --kubeconfig, set KUBECONFIG, run in a pod with a service account, or create ${join(home, '.kube/config')}`,
    );
    expect(() =>
      loadClusterConnection({ env: inCluster, serviceAccountDir: join(dir, 'none'), homeDir: home }),
    ).toThrow(/is automountServiceAccountToken off\?/);
  });

  it('names the field and the file when a file it points to cannot be read', () => {
    const path = write('k/config', single('k', { cluster: 'certificate-authority: ca.crt' }));
    expect(() => loadClusterConnection({ path, env: {} })).toThrow(
      `cannot read clusters[k].cluster in ${path}: certificate-authority (${join(dir, 'k/ca.crt')}): ENOENT`,
    );
    const userPath = write('u/config', single('u', { user: 'client-certificate: c.pem, client-key: k.pem' }));
    expect(() => loadClusterConnection({ path: userPath, env: {} })).toThrow(
      `users[u].user in ${userPath}: client-certificate`,
    );
  });
});

describe('credentials from a kubeconfig user', () => {
  it('re-reads a tokenFile (relative to the kubeconfig) and keeps the last token when a read fails', async () => {
    const tokenFile = write('k/token', 'first\n');
    const connection = loadClusterConnection({
      path: write('k/config', single('k', { user: 'tokenFile: token' })),
      env: {},
    });
    expect(await authorization(connection)).toBe('Bearer first');
    writeFileSync(tokenFile, 'second');
    expect(await authorization(connection)).toBe('Bearer second');
    unlinkSync(tokenFile);
    expect(await authorization(connection)).toBe('Bearer second');
  });

  it('sends a static token until the tokenFile can be read, and fails only without either', async () => {
    const connection = loadClusterConnection({
      path: write('k/config', single('k', { user: 'token: static, tokenFile: later' })),
      env: {},
    });
    expect(await authorization(connection)).toBe('Bearer static');
    write('k/later', 'rotated');
    expect(await authorization(connection)).toBe('Bearer rotated');
    const path = write('j/config', single('j', { user: 'tokenFile: absent' }));
    await expect(loadClusterConnection({ path, env: {} }).credentials.credentials(false)).rejects.toThrow(
      `cannot read the bearer token from ${join(dir, 'j/absent')} (users[j].user in ${path}: tokenFile)`,
    );
  });

  it('sends basic auth, impersonation headers, and nothing for a context without a user', async () => {
    const basic = loadClusterConnection({
      path: write(
        'b/config',
        single('b', { user: 'username: ana, password: "s3:cret", as: bob, as-uid: "42", as-groups: [g1, g2]' }),
      ),
      env: {},
    });
    expect((await basic.credentials.credentials(false)).headers).toEqual({
      Authorization: `Basic ${Buffer.from('ana:s3:cret').toString('base64')}`,
      'Impersonate-User': 'bob',
      'Impersonate-Uid': '42',
      'Impersonate-Group': ['g1', 'g2'],
    });
    const anonymous = write(
      'n/config',
      'clusters: [{name: c, cluster: {server: "http://k", insecure-skip-tls-verify: true}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x',
    );
    const connection = loadClusterConnection({ path: anonymous, env: {} });
    expect((await connection.credentials.credentials(false)).headers).toEqual({});
    expect(connection.tls.rejectUnauthorized).toBe(false);
  });

  it('takes client certificates, CA and tls-server-name from files and data', () => {
    write('c/pki/client.crt', 'CERT');
    write('c/pki/client.key', 'KEY');
    const path = write(
      'c/config',
      single('c', {
        cluster: `certificate-authority-data: ${Buffer.from('CA DATA').toString('base64')}, tls-server-name: api.internal`,
        user: 'client-certificate: pki/client.crt, client-key: pki/client.key',
      }),
    );
    const { tls } = loadClusterConnection({ path, env: {} });
    expect({
      ca: tls.ca?.toString(),
      cert: tls.cert?.toString(),
      key: tls.key?.toString(),
      servername: tls.servername,
      rejectUnauthorized: tls.rejectUnauthorized,
    }).toEqual({ ca: 'CA DATA', cert: 'CERT', key: 'KEY', servername: 'api.internal', rejectUnauthorized: true });
  });
});

describe('inClusterConnection', () => {
  it('builds https://host:port with the service account CA, namespace and token', async () => {
    const connection = inClusterConnection(
      { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccount(),
    );
    expect(connection).toMatchObject({ server: 'https://10.96.0.1:443', namespace: 'operators', origin: 'in-cluster' });
    expect(connection.tls.ca?.toString()).toBe('CA PEM');
    expect(await authorization(connection)).toBe('Bearer sa-token-1');
  });

  it('follows the kubelet rotating the projected token', async () => {
    const saDir = serviceAccount();
    const connection = inClusterConnection(
      { KUBERNETES_SERVICE_HOST: 'kubernetes', KUBERNETES_SERVICE_PORT: '6443' },
      saDir,
    );
    expect(await authorization(connection)).toBe('Bearer sa-token-1');
    // The kubelet swaps a symlinked directory atomically; for the reader it is a new file content.
    writeFileSync(join(saDir, 'token'), 'sa-token-2\n');
    expect(await authorization(connection)).toBe('Bearer sa-token-2');
  });

  it('brackets an IPv6 service address and does without ca.crt (system roots)', () => {
    const saDir = serviceAccount();
    unlinkSync(join(saDir, 'ca.crt'));
    const connection = inClusterConnection(
      { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      saDir,
    );
    expect(connection.server).toBe('https://[fd00::1]:443');
    expect(connection.tls.ca).toBeUndefined();
  });

  it('fails at start without the service variables or with an unreadable or empty token', () => {
    const saDir = serviceAccount();
    expect(() => inClusterConnection({ KUBERNETES_SERVICE_HOST: 'k' }, saDir)).toThrow(
      'needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT',
    );
    writeFileSync(join(saDir, 'token'), '  \n');
    expect(() => inClusterConnection({ KUBERNETES_SERVICE_HOST: 'k', KUBERNETES_SERVICE_PORT: '443' }, saDir)).toThrow(
      `${join(saDir, 'token')}: the service account token is empty`,
    );
    if (process.getuid?.() !== 0) {
      chmodSync(join(saDir, 'token'), 0);
      expect(() =>
        inClusterConnection({ KUBERNETES_SERVICE_HOST: 'k', KUBERNETES_SERVICE_PORT: '443' }, saDir),
      ).toThrow('cannot read the service account token');
    }
  });
});
