import { describe, expect, it } from 'vitest';
import {
  apiserverArgs,
  controllerManagerArgs,
  etcdArgs,
  kwokArgs,
  schedulerArgs,
} from '../../../../dev/cluster/flags.js';

const api = {
  etcdEndpoint: 'http://127.0.0.1:40001',
  securePort: 40003,
  certDir: '/d/pki',
  tlsCertFile: '/d/pki/apiserver.crt',
  tlsKeyFile: '/d/pki/apiserver.key',
  tokenAuthFile: '/d/tokens.csv',
  serviceAccountPublicKeyFile: '/d/pki/sa.pub',
  serviceAccountSigningKeyFile: '/d/pki/sa.key',
  requestHeaderCaFile: '/d/pki/front-proxy-ca.crt',
  proxyClientCertFile: '/d/pki/front-proxy-client.crt',
  proxyClientKeyFile: '/d/pki/front-proxy-client.key',
};

function flagMap(args: string[]): Map<string, string> {
  return new Map(
    args.map((a) => {
      const [k = '', ...v] = a.split('=');
      return [k, v.join('=')];
    }),
  );
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
  it('configures the aggregation layer: the front-proxy CA, allowed name, headers and client certificate', () => {
    const f = flagMap(apiserverArgs(api));
    expect(f.get('--requestheader-client-ca-file')).toBe('/d/pki/front-proxy-ca.crt');
    expect(f.get('--requestheader-allowed-names')).toBe('front-proxy-client');
    expect(f.get('--requestheader-username-headers')).toBe('X-Remote-User');
    expect(f.get('--proxy-client-cert-file')).toBe('/d/pki/front-proxy-client.crt');
    expect(f.get('--proxy-client-key-file')).toBe('/d/pki/front-proxy-client.key');
  });

  it('routes webhooks and APIServices to endpoints only with a real node (an ExternalName APIService has none)', () => {
    expect(flagMap(apiserverArgs(api)).has('--enable-aggregator-routing')).toBe(false);
    expect(flagMap(apiserverArgs({ ...api, routeToEndpoints: true })).get('--enable-aggregator-routing')).toBe('true');
  });

  it('serves only TLS on loopback, with token authentication and RBAC', () => {
    const f = flagMap(apiserverArgs(api));
    expect(f.get('--etcd-servers')).toBe('http://127.0.0.1:40001');
    expect(f.get('--bind-address')).toBe('127.0.0.1');
    expect(f.get('--secure-port')).toBe('40003');
    // Removed in 1.24: a current apiserver refuses to start with it.
    expect(f.has('--insecure-port')).toBe(false);
    // The kubernetes Service's endpoints would be the loopback advertise address, which EndpointSlices refuse.
    expect(f.get('--endpoint-reconciler-type')).toBe('none');
    expect(f.get('--token-auth-file')).toBe('/d/tokens.csv');
    expect(f.get('--authorization-mode')).toBe('RBAC');
    expect(f.get('--tls-cert-file')).toBe('/d/pki/apiserver.crt');
    expect(f.get('--tls-private-key-file')).toBe('/d/pki/apiserver.key');
  });

  it('passes both service-account key flags and an issuer, which the apiserver requires together', () => {
    const f = flagMap(apiserverArgs(api));
    expect(f.get('--service-account-key-file')).toBe('/d/pki/sa.pub');
    expect(f.get('--service-account-signing-key-file')).toBe('/d/pki/sa.key');
    expect(f.get('--service-account-issuer')).toMatch(/^https:\/\//);
    // Dual-stack: an IPv4 range, then an IPv6 one.
    expect(f.get('--service-cluster-ip-range')).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+,[0-9a-f:]+\/\d+$/);
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

describe('the controllers and kwok', () => {
  it('run kube-controller-manager as kubeadm does: one instance, a service account per controller, on a loopback port', () => {
    const f = flagMap(
      controllerManagerArgs({
        kubeconfig: '/d/kcm.kubeconfig',
        securePort: 40010,
        caFile: '/d/pki/ca.crt',
        serviceAccountSigningKeyFile: '/d/pki/sa.key',
      }),
    );
    expect(f.get('--kubeconfig')).toBe('/d/kcm.kubeconfig');
    expect(f.get('--bind-address')).toBe('127.0.0.1');
    expect(f.get('--secure-port')).toBe('40010');
    expect(f.get('--leader-elect')).toBe('false');
    expect(f.get('--use-service-account-credentials')).toBe('true');
    expect(f.get('--root-ca-file')).toBe('/d/pki/ca.crt');
    expect(f.get('--service-account-private-key-file')).toBe('/d/pki/sa.key');
    expect(f.has('--kube-api-qps')).toBe(false);
  });

  it("lifts kube-controller-manager's client rate limit only when asked (dev's fresh cluster)", () => {
    const f = flagMap(
      controllerManagerArgs({
        kubeconfig: '/d/kcm.kubeconfig',
        securePort: 40010,
        caFile: '/d/pki/ca.crt',
        serviceAccountSigningKeyFile: '/d/pki/sa.key',
        unthrottled: true,
      }),
    );
    expect([f.get('--kube-api-qps'), f.get('--kube-api-burst')]).toEqual(['5000', '10000']);
  });

  it('runs kube-scheduler on a loopback port without a lease', () => {
    const f = flagMap(schedulerArgs({ kubeconfig: '/d/s.kubeconfig', securePort: 40011 }));
    expect([f.get('--kubeconfig'), f.get('--bind-address'), f.get('--secure-port'), f.get('--leader-elect')]).toEqual([
      '/d/s.kubeconfig',
      '127.0.0.1',
      '40011',
      'false',
    ]);
  });

  it('has kwok manage only the labelled Nodes, with leases, serving on loopback', () => {
    const f = flagMap(
      kwokArgs({
        kubeconfig: '/d/k',
        stagesFile: '/d/stages.yaml',
        nodeLabel: 'kwok.x-k8s.io/node',
        serverPort: 40012,
      }),
    );
    expect(f.get('--manage-nodes-with-label-selector')).toBe('kwok.x-k8s.io/node');
    expect(f.get('--config')).toBe('/d/stages.yaml');
    expect(f.get('--server-address')).toBe('127.0.0.1:40012');
    expect(Number(f.get('--node-lease-duration-seconds'))).toBeGreaterThan(0);
  });
});
