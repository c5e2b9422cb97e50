import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  KubeconfigError,
  mergeKubeconfigs,
  parseKubeconfig,
  readKubeconfigFiles,
  selectContext,
} from '../../../src/kube/kubeconfig.js';

const CA_B64 = Buffer.from('-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n').toString('base64');

function kubeconfig(parts: { clusters?: string; users?: string; contexts?: string; current?: string }): string {
  return [
    parts.clusters !== undefined ? `clusters:\n${parts.clusters}` : '',
    parts.users !== undefined ? `users:\n${parts.users}` : '',
    parts.contexts !== undefined ? `contexts:\n${parts.contexts}` : '',
    parts.current !== undefined ? `current-context: ${parts.current}` : '',
  ].join('\n');
}

describe('parseKubeconfig', () => {
  it('reads clusters, users and contexts with their kubeconfig field names', () => {
    const config = parseKubeconfig(
      kubeconfig({
        clusters: `- name: prod\n  cluster:\n    server: https://10.0.0.1:6443/\n    certificate-authority-data: ${CA_B64}\n    tls-server-name: kubernetes.default\n`,
        users: '- name: admin\n  user:\n    token: t0k3n\n    as: jane\n    as-groups: [devs, ops]\n',
        contexts: '- name: main\n  context: {cluster: prod, user: admin, namespace: apps}\n',
        current: 'main',
      }),
      '/etc/kube/config',
    );
    const { cluster, user, context } = selectContext(config);
    expect(cluster).toMatchObject({
      server: 'https://10.0.0.1:6443',
      tlsServerName: 'kubernetes.default',
      insecureSkipTlsVerify: false,
    });
    expect(cluster.certificateAuthorityData?.toString()).toContain('BEGIN CERTIFICATE');
    expect(user).toMatchObject({ token: 't0k3n', impersonate: { user: 'jane', groups: ['devs', 'ops'] } });
    expect(context).toMatchObject({ namespace: 'apps', file: '/etc/kube/config' });
  });

  it('resolves relative paths against the directory of the file, and exec commands only when they are paths', () => {
    const config = parseKubeconfig(
      kubeconfig({
        clusters: '- name: c\n  cluster: {server: "https://k:6443", certificate-authority: certs/ca.crt}\n',
        users:
          [
            '- name: cert\n  user: {client-certificate: ../pki/client.crt, client-key: /abs/client.key, tokenFile: token}',
            '- name: plugin\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: ./bin/get-token, args: [--x]}',
            '- name: onpath\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, interactiveMode: Never}',
          ].join('\n') + '\n',
      }),
      '/home/ana/.kube/config',
    );
    expect(config.clusters.get('c')?.certificateAuthority).toBe('/home/ana/.kube/certs/ca.crt');
    expect(config.users.get('cert')).toMatchObject({
      clientCertificate: '/home/ana/pki/client.crt',
      clientKey: '/abs/client.key',
      tokenFile: '/home/ana/.kube/token',
    });
    expect(config.users.get('plugin')?.exec).toMatchObject({
      command: '/home/ana/.kube/bin/get-token',
      args: ['--x'],
      interactiveMode: 'IfAvailable',
    });
    expect(config.users.get('onpath')?.exec).toMatchObject({ command: 'aws', interactiveMode: 'Never' });
  });

  it('reads an empty file as an empty config', () => {
    const config = parseKubeconfig('', '/k');
    expect([config.clusters.size, config.users.size, config.contexts.size, config.currentContext]).toEqual([
      0,
      0,
      0,
      undefined,
    ]);
  });

  it.each([
    ['clusters: [{cluster: {server: "https://x"}}]', /\/k: clusters\[0\]\.name is missing/],
    ['clusters: [{name: c, cluster: {}}]', /\/k: clusters\[c\]\.cluster\.server is missing/],
    ['clusters: [{name: c, cluster: {server: "ftp://x"}}]', /clusters\[c\]\.cluster\.server must be an http\(s\) URL/],
    [
      'clusters: [{name: c, cluster: {server: "https://x", insecure-skip-tls-verify: "yes"}}]',
      /insecure-skip-tls-verify must be true or false/,
    ],
    [
      'clusters: [{name: c, cluster: {server: "https://x", certificate-authority-data: "not base64!"}}]',
      /certificate-authority-data is not valid base64/,
    ],
    ['users: [{name: u, user: {token: 42}}]', /users\[u\]\.user\.token must be a string/],
    ['users: [{name: u, user: {exec: {command: x}}}]', /users\[u\]\.user\.exec\.apiVersion is missing/],
    [
      'users: [{name: u, user: {exec: {apiVersion: v, command: x, interactiveMode: Sometimes}}}]',
      /interactiveMode must be Never, IfAvailable or Always/,
    ],
    ['users: [{name: u, user: {as-user-extra: {a: [b]}}}]', /as-user-extra is not supported/],
    ['contexts: [{name: x, context: {user: u}}]', /contexts\[x\]\.context\.cluster is missing/],
    ['clusters: {c: {server: x}}', /\/k: clusters must be a list/],
    ['[1, 2]', /\/k: a kubeconfig must be a mapping/],
    ['clusters: [', /\/k: not valid YAML/],
  ])('refuses %s naming the file and the field', (text, message) => {
    expect(() => parseKubeconfig(text, '/k')).toThrow(KubeconfigError);
    expect(() => parseKubeconfig(text, '/k')).toThrow(message);
  });
});

describe('mergeKubeconfigs (client-go precedence rules)', () => {
  const first = parseKubeconfig(
    kubeconfig({
      clusters: '- name: shared\n  cluster: {server: "https://first"}\n',
      users: '- name: u\n  user: {token: first-token}\n',
      contexts: '- name: a\n  context: {cluster: shared, user: u}\n',
    }),
    '/one/config',
  );
  const second = parseKubeconfig(
    kubeconfig({
      clusters:
        '- name: shared\n  cluster: {server: "https://second"}\n- name: only-second\n  cluster: {server: "https://second-only", certificate-authority: ca.crt}\n',
      users: '- name: u\n  user: {token: second-token}\n',
      contexts: '- name: b\n  context: {cluster: only-second, user: u}\n',
      current: 'b',
    }),
    '/two/config',
  );
  const third = parseKubeconfig(kubeconfig({ current: 'a' }), '/three/config');

  it('keeps the first file’s entry for a name and adds the names only later files define', () => {
    const merged = mergeKubeconfigs([first, second]);
    expect(merged.clusters.get('shared')?.server).toBe('https://first');
    expect(merged.users.get('u')?.token).toBe('first-token');
    // An entry keeps the paths of the file that defined it.
    expect(merged.clusters.get('only-second')?.certificateAuthority).toBe('/two/ca.crt');
    expect([...merged.contexts.keys()]).toEqual(['a', 'b']);
    expect(merged.files).toEqual(['/one/config', '/two/config']);
  });

  it('takes current-context from the first file that sets one', () => {
    expect(mergeKubeconfigs([first, second, third]).currentContext).toEqual({ name: 'b', file: '/two/config' });
    expect(mergeKubeconfigs([third, second]).currentContext).toEqual({ name: 'a', file: '/three/config' });
    const { cluster, user } = selectContext(mergeKubeconfigs([first, second, third]));
    expect([cluster.server, user?.token]).toEqual(['https://second-only', 'first-token']);
  });
});

describe('selectContext', () => {
  const base = {
    clusters: '- name: c\n  cluster: {server: "https://k"}\n',
    users: '- name: u\n  user: {token: t}\n',
    contexts: '- name: x\n  context: {cluster: c, user: u}\n',
  };

  it('names what is missing and where it was named', () => {
    expect(() => selectContext(parseKubeconfig(kubeconfig({ ...base }), '/k'))).toThrow(
      '/k: no current-context is set',
    );
    expect(() => selectContext(parseKubeconfig(kubeconfig({ ...base, current: 'nope' }), '/k'))).toThrow(
      '/k: context "nope" (current-context of /k) is not defined; contexts: x',
    );
    expect(() => selectContext(parseKubeconfig(kubeconfig({ ...base, current: 'x' }), '/k'), 'other')).toThrow(
      'context "other" (the chosen context) is not defined',
    );
    expect(() =>
      selectContext(
        parseKubeconfig(
          kubeconfig({ ...base, contexts: '- name: x\n  context: {cluster: gone, user: u}\n', current: 'x' }),
          '/k',
        ),
      ),
    ).toThrow('/k: contexts[x].context.cluster names cluster "gone", which is not defined in /k');
    expect(() =>
      selectContext(
        parseKubeconfig(
          kubeconfig({ ...base, contexts: '- name: x\n  context: {cluster: c, user: ghost}\n', current: 'x' }),
          '/k',
        ),
      ),
    ).toThrow('/k: contexts[x].context.user names user "ghost", which is not defined in /k');
  });

  it('allows a context without a user (anonymous)', () => {
    const selected = selectContext(
      parseKubeconfig(kubeconfig({ ...base, contexts: '- name: x\n  context: {cluster: c}\n', current: 'x' }), '/k'),
    );
    expect(selected.user).toBeUndefined();
  });

  it.each([
    ['a token with basic auth', 'user: {token: t, username: a, password: b}', /more than one authentication method/],
    [
      'exec with auth-provider',
      'user: {exec: {apiVersion: v, command: c}, auth-provider: {name: oidc}}',
      /exec and auth-provider cannot both be set/,
    ],
    [
      'a certificate without a key',
      'user: {client-certificate-data: YQ==}',
      /client-key or client-key-data is missing/,
    ],
    [
      'a key without a certificate',
      'user: {client-key: k.pem}',
      /client-certificate or client-certificate-data is missing/,
    ],
    [
      'both forms of a certificate',
      'user: {client-certificate: c.pem, client-certificate-data: YQ==, client-key: k.pem}',
      /client-certificate and client-certificate-data are both set/,
    ],
    [
      'an interactive-only plugin',
      'user: {exec: {apiVersion: v, command: c, interactiveMode: Always}}',
      /interactiveMode: Always needs a terminal/,
    ],
  ])('refuses %s', (_what, user, message) => {
    expect(() =>
      selectContext(parseKubeconfig(kubeconfig({ ...base, users: `- name: u\n  ${user}\n`, current: 'x' }), '/k')),
    ).toThrow(message);
  });

  it.each([
    [
      'both forms of a CA',
      'cluster: {server: "https://k", certificate-authority: ca.crt, certificate-authority-data: YQ==}',
      /certificate-authority and certificate-authority-data are both set/,
    ],
    [
      'a CA with insecure-skip-tls-verify',
      'cluster: {server: "https://k", certificate-authority-data: YQ==, insecure-skip-tls-verify: true}',
      /insecure-skip-tls-verify with a certificate authority/,
    ],
    [
      'a SOCKS proxy',
      'cluster: {server: "https://k", proxy-url: "socks5://proxy:1080"}',
      /\/k: clusters\[c\]\.cluster\.proxy-url: "socks5:\/\/proxy:1080" is not an http:\/\/ or https:\/\/ URL/,
    ],
  ])('refuses a cluster with %s', (_what, cluster, message) => {
    expect(() =>
      selectContext(
        parseKubeconfig(kubeconfig({ ...base, clusters: `- name: c\n  ${cluster}\n`, current: 'x' }), '/k'),
      ),
    ).toThrow(message);
  });
});

describe('readKubeconfigFiles', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('skips missing files of a list, but not all of them, and never an explicit one', () => {
    dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
    const present = join(dir, 'present');
    writeFileSync(present, kubeconfig({ clusters: '- name: c\n  cluster: {server: "https://k"}\n' }));
    expect(readKubeconfigFiles([join(dir, 'missing'), '', present], { mustExist: false }).files).toEqual([present]);
    expect(() => readKubeconfigFiles([join(dir, 'missing'), join(dir, 'gone')], { mustExist: false })).toThrow(
      `none of the kubeconfig files exists: ${join(dir, 'missing')}, ${join(dir, 'gone')}`,
    );
    expect(() => readKubeconfigFiles([join(dir, 'missing')], { mustExist: true })).toThrow(
      `cannot read kubeconfig ${join(dir, 'missing')}: ENOENT`,
    );
  });

  it('reports an unreadable file rather than skipping it', () => {
    dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
    // A directory where a file is expected: EISDIR, not "missing".
    expect(() => readKubeconfigFiles([dir], { mustExist: false })).toThrow(`cannot read kubeconfig ${dir}: EISDIR`);
  });
});
