/** Exec credential plugins run as real child processes (small node scripts), and auth-provider users through client-node. */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  connectionFromKubeconfig,
  loadClusterConnection,
  type ClusterConnection,
} from '../../../src/kube/cluster-connection.js';
import { ClientNodeAuthProvider } from '../../../src/kube/credentials.js';
import { ExecCredentialPlugin, parseExecCredential } from '../../../src/kube/exec-credential.js';
import {
  parseKubeconfig,
  selectContext,
  type ExecPluginConfig,
  type KubeconfigCluster,
} from '../../../src/kube/kubeconfig.js';
import { ManualClock } from '../../support/manual-clock.js';

const V1 = 'client.authentication.k8s.io/v1';
let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kubeconfig-exec-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A credential plugin: counts its runs in `runs`, records its argv, environment and
 * KUBERNETES_EXEC_INFO in `seen.json`, and prints `output(run)` (a JS expression over `run`).
 */
function plugin(output: string, name = 'plugin.mjs'): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `#!${process.execPath}
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
const runsFile = new URL('./runs', import.meta.url);
appendFileSync(runsFile, 'x');
const run = readFileSync(runsFile, 'utf8').length;
writeFileSync(new URL('./seen.json', import.meta.url), JSON.stringify({ argv: process.argv.slice(2), greeting: process.env.GREETING, info: JSON.parse(process.env.KUBERNETES_EXEC_INFO ?? 'null') }));
${output}
`,
  );
  chmodSync(path, 0o755);
  return path;
}

const credential = (status: string): string =>
  `process.stdout.write(JSON.stringify({ apiVersion: '${V1}', kind: 'ExecCredential', status: ${status} }));`;
const runs = (): number => {
  try {
    return readFileSync(join(dir, 'runs'), 'utf8').length;
  } catch {
    return 0;
  }
};

const cluster: KubeconfigCluster = {
  name: 'c',
  file: '/k',
  server: 'https://k:6443',
  insecureSkipTlsVerify: false,
  certificateAuthorityData: Buffer.from('CA'),
  execExtension: { audience: 'k8s' },
};
const exec = (command: string, extra: Partial<ExecPluginConfig> = {}): ExecPluginConfig => ({
  command,
  args: [],
  env: [],
  apiVersion: V1,
  provideClusterInfo: false,
  interactiveMode: 'Never',
  ...extra,
});

describe('ExecCredentialPlugin', () => {
  it('runs the plugin with its args, env and KUBERNETES_EXEC_INFO (cluster info when asked), relative to the kubeconfig', async () => {
    plugin(credential(`{ token: 'tok-' + run }`), 'get-token.mjs');
    const kubeconfig = join(dir, 'config');
    writeFileSync(
      kubeconfig,
      [
        'clusters: [{name: c, cluster: {server: "https://k:6443", certificate-authority-data: Q0E=, extensions: [{name: client.authentication.k8s.io/exec, extension: {audience: k8s}}]}}]',
        `users: [{name: u, user: {exec: {apiVersion: ${V1}, command: ./get-token.mjs, args: [--region, eu], env: [{name: GREETING, value: hello}], provideClusterInfo: true, interactiveMode: Never}}}]`,
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    const connection = loadClusterConnection({ path: kubeconfig, env: {} });
    expect((await connection.credentials.credentials(false)).headers).toEqual({ Authorization: 'Bearer tok-1' });
    const seen = JSON.parse(readFileSync(join(dir, 'seen.json'), 'utf8')) as unknown;
    expect(seen).toEqual({
      argv: ['--region', 'eu'],
      greeting: 'hello',
      info: {
        apiVersion: V1,
        kind: 'ExecCredential',
        spec: {
          interactive: false,
          cluster: { server: 'https://k:6443', 'certificate-authority-data': 'Q0E=', config: { audience: 'k8s' } },
        },
      },
    });
  });

  it('caches the credential until its expirationTimestamp, and runs again after a 401 (afresh)', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    const source = new ExecCredentialPlugin(
      exec(plugin(credential(`{ token: 'tok-' + run, expirationTimestamp: '2030-01-01T00:10:00Z' }`))),
      cluster,
      'test',
      { clock },
    );
    expect((await source.credentials(false)).headers.Authorization).toBe('Bearer tok-1');
    expect((await source.credentials(false)).expiresAt).toBe(Date.parse('2030-01-01T00:10:00Z'));
    expect(runs()).toBe(1);
    await clock.advance(10 * 60_000);
    expect((await source.credentials(false)).headers.Authorization).toBe('Bearer tok-2');
    expect((await source.credentials(true)).headers.Authorization).toBe('Bearer tok-3');
  });

  it('keeps a credential without expiry until a 401', async () => {
    const source = new ExecCredentialPlugin(exec(plugin(credential(`{ token: 'tok-' + run }`))), cluster, 'test');
    await source.credentials(false);
    await source.credentials(false);
    expect(runs()).toBe(1);
    expect((await source.credentials(true)).headers.Authorization).toBe('Bearer tok-2');
  });

  it('reports a failing plugin with its stderr, a missing one with the install hint, and a hung one', async () => {
    const failing = new ExecCredentialPlugin(
      exec(plugin("process.stderr.write('token expired, run: login'); process.exit(3);")),
      cluster,
      'users[u].user in /k: exec',
    );
    await expect(failing.credentials(false)).rejects.toThrow(
      /users\[u\]\.user in \/k: exec: the credential plugin .* exited with status 3: token expired, run: login/,
    );
    const missing = new ExecCredentialPlugin(
      exec(join(dir, 'not-installed'), { installHint: 'install it with: apt install the-plugin' }),
      cluster,
      'test',
    );
    await expect(missing.credentials(false)).rejects.toThrow(
      /could not be started: .*ENOENT.*\ninstall it with: apt install the-plugin/s,
    );
    const hung = new ExecCredentialPlugin(exec(plugin('setTimeout(() => {}, 60_000);')), cluster, 'test', {
      timeoutMs: 300,
    });
    await expect(hung.credentials(false)).rejects.toThrow(/was ended by SIGKILL \(no answer within 300 ms\?\)/);
  });

  it('refuses an unsupported apiVersion before running anything', () => {
    expect(
      () =>
        new ExecCredentialPlugin(
          exec('x', { apiVersion: 'client.authentication.k8s.io/v1alpha1' }),
          cluster,
          'users[u].user.exec',
        ),
    ).toThrow('users[u].user.exec.apiVersion: client.authentication.k8s.io/v1alpha1 is not supported');
  });
});

describe('parseExecCredential', () => {
  const parse = (doc: unknown): ReturnType<typeof parseExecCredential> =>
    parseExecCredential(JSON.stringify(doc), V1, 'p');

  it('takes a token, or a client certificate and key (PEM text)', () => {
    expect(parse({ apiVersion: V1, kind: 'ExecCredential', status: { token: 't' } })).toEqual({
      headers: { Authorization: 'Bearer t' },
    });
    const withCert = parse({
      apiVersion: V1,
      kind: 'ExecCredential',
      status: {
        clientCertificateData: 'CERT PEM',
        clientKeyData: 'KEY PEM',
        expirationTimestamp: '2030-01-01T00:00:00Z',
      },
    });
    expect(withCert.headers).toEqual({});
    expect(withCert.clientCertificate?.cert.toString()).toBe('CERT PEM');
    expect(withCert.expiresAt).toBe(Date.parse('2030-01-01T00:00:00Z'));
  });

  it.each([
    ['not json', /is not JSON/],
    [JSON.stringify({ apiVersion: V1, kind: 'Status' }), /is not an ExecCredential/],
    [
      JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1beta1',
        kind: 'ExecCredential',
        status: { token: 't' },
      }),
      /has apiVersion client.authentication.k8s.io\/v1beta1, but the kubeconfig asks for client.authentication.k8s.io\/v1/,
    ],
    [JSON.stringify({ apiVersion: V1, kind: 'ExecCredential' }), /has no status/],
    [JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', status: {} }), /has neither status.token nor/],
    [
      JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', status: { clientCertificateData: 'c' } }),
      /has only one of/,
    ],
    [
      JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', status: { token: 't', expirationTimestamp: 'soon' } }),
      /invalid status.expirationTimestamp: "soon"/,
    ],
  ])('refuses %s', (stdout, message) => {
    expect(() => parseExecCredential(stdout, V1, 'p')).toThrow(message);
  });
});

describe('auth-provider users (through client-node, loaded on demand)', () => {
  /** The connection of a kubeconfig `/k` whose current context uses `user`, a gcp auth-provider user. */
  const gcpUser = (user: string, accessToken: string, expiry: string): ClusterConnection =>
    connectionFromKubeconfig(
      selectContext(
        parseKubeconfig(
          [
            'clusters: [{name: c, cluster: {server: "https://k"}}]',
            `users: [{name: ${user}, user: {auth-provider: {name: gcp, config: {access-token: ${accessToken}, expiry: "${expiry}"}}}}]`,
            `contexts: [{name: x, context: {cluster: c, user: ${user}}}]`,
            'current-context: x',
          ].join('\n'),
          '/k',
        ),
      ),
    );

  it('gets the token of a gcp auth-provider that has not expired', async () => {
    const connection = gcpUser('u', 'ya29.token', '2999-01-01T00:00:00Z');
    expect(connection.credentials).toBeInstanceOf(ClientNodeAuthProvider);
    expect((await connection.credentials.credentials(false)).headers).toEqual({ Authorization: 'Bearer ya29.token' });
  });

  it('names the user when the provider fails', async () => {
    await expect(gcpUser('old', 'stale', '2000-01-01T00:00:00Z').credentials.credentials(false)).rejects.toThrow(
      'users[old].user.auth-provider (gcp) in /k: Token is expired!',
    );
  });
});

describe('the common paths never load @kubernetes/client-node', () => {
  it('has no static (value) import of it anywhere in src/', async () => {
    const src = new URL('../../../src/', import.meta.url);
    const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts'));
    const offenders: string[] = [];
    for (const file of files) {
      const text = await readFile(new URL(file, src), 'utf8');
      // `import type` is erased; `await import(...)` is the on-demand load in credentials.ts.
      if (/^\s*(import|export)\s+(?!type\b)[^;]*from\s+'@kubernetes\/client-node'/m.test(text)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
    expect(files).toContain('kube/credentials.ts');
  });
});
