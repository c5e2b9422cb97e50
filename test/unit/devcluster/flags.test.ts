import { describe, expect, it } from 'vitest';
import { apiserverArgs, etcdArgs } from '../../../src/devcluster/flags.js';

const api = {
  etcdEndpoint: 'http://127.0.0.1:40001',
  securePort: 40003,
  certDir: '/d/pki',
  tlsCertFile: '/d/pki/apiserver.crt',
  tlsKeyFile: '/d/pki/apiserver.key',
  tokenAuthFile: '/d/tokens.csv',
  serviceAccountPublicKeyFile: '/d/pki/sa.pub',
  serviceAccountSigningKeyFile: '/d/pki/sa.key',
};

function flagMap(args: string[]): Map<string, string> {
  return new Map(args.map((a) => {
    const [k = '', ...v] = a.split('=');
    return [k, v.join('=')];
  }));
}

describe('etcdArgs', () => {
  it('binds client and peer URLs to the given loopback ports only', () => {
    const f = flagMap(etcdArgs({ dataDir: '/d/etcd', clientPort: 40001, peerPort: 40002 }));
    expect(f.get('--data-dir')).toBe('/d/etcd');
    expect(f.get('--listen-client-urls')).toBe('http://127.0.0.1:40001');
    expect(f.get('--advertise-client-urls')).toBe('http://127.0.0.1:40001');
    expect(f.get('--listen-peer-urls')).toBe('http://127.0.0.1:40002');
    expect(f.get('--initial-cluster')).toBe(`${f.get('--name')}=http://127.0.0.1:40002`);
  });
});

describe('apiserverArgs', () => {
  it('serves only TLS on loopback, with token authentication and RBAC', () => {
    const f = flagMap(apiserverArgs(api));
    expect(f.get('--etcd-servers')).toBe('http://127.0.0.1:40001');
    expect(f.get('--bind-address')).toBe('127.0.0.1');
    expect(f.get('--secure-port')).toBe('40003');
    // 1.20 would otherwise open an unauthenticated port 8080 shared by every run.
    expect(f.get('--insecure-port')).toBe('0');
    expect(f.get('--token-auth-file')).toBe('/d/tokens.csv');
    expect(f.get('--authorization-mode')).toBe('RBAC');
    expect(f.get('--tls-cert-file')).toBe('/d/pki/apiserver.crt');
    expect(f.get('--tls-private-key-file')).toBe('/d/pki/apiserver.key');
  });

  it('passes both service-account key flags and an issuer, which 1.20 requires together', () => {
    const f = flagMap(apiserverArgs(api));
    expect(f.get('--service-account-key-file')).toBe('/d/pki/sa.pub');
    expect(f.get('--service-account-signing-key-file')).toBe('/d/pki/sa.key');
    expect(f.get('--service-account-issuer')).toMatch(/^https:\/\//);
    expect(f.get('--service-cluster-ip-range')).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
  });

  it('turns the watch cache off unless asked, so etcd compaction reaches watchers as 410 Gone', () => {
    expect(flagMap(apiserverArgs(api)).get('--watch-cache')).toBe('false');
    expect(flagMap(apiserverArgs({ ...api, watchCache: true })).get('--watch-cache')).toBe('true');
  });

  it('never repeats a flag', () => {
    const names = apiserverArgs(api).map((a) => a.split('=')[0]);
    expect(new Set(names).size).toBe(names.length);
  });
});
