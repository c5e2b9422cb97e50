/**
 * The gateway's CA published like kube-root-ca.crt, on the real control plane: an operator process issuing
 * the gateway's certificate (as `endpoint-operator run` does) puts ConfigMap endpoint-operator-gateway-ca.crt
 * into a new namespace once a PredictionEndpoint is applied there, follows the Secret when the CA rotates
 * (the new CA and the old one, both trusted during the rollout), and takes the ConfigMap away with the
 * namespace's last PredictionEndpoint. With another issuer's Secret (cert-manager's shape) the operator only
 * reads its ca.crt.
 */
import yaml from 'js-yaml';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_CA_CONFIGMAP } from '../../../src/operator/gateway-ca-configmaps.js';
import {
  DEFAULT_GATEWAY_TLS,
  ensureGatewayCertificate,
  type GatewayTlsSettings,
} from '../../../src/operator/gateway-certificate.js';
import { startOperatorProcess, type RunningProcess } from '../../../src/operator/process.js';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { FakeApi } from '../../unit/webhook/fake-api.js';
import { apply, eventually, installCrds, testClient } from './harness.js';

const DAY = 86_400_000;

async function publishedCa(ns: string): Promise<string | undefined> {
  const r = await kubectl(['get', 'configmap', '-n', ns, GATEWAY_CA_CONFIGMAP, '-o', 'json', '--ignore-not-found']);
  if (r.code !== 0) throw new Error(`kubectl get configmap failed: ${r.stderr}`);
  if (r.stdout.trim() === '') return undefined;
  return (JSON.parse(r.stdout) as { data?: Record<string, string> }).data?.['ca.crt'];
}

async function secretCa(ns: string, name: string): Promise<string> {
  const r = await kubectl(['get', 'secret', '-n', ns, name, '-o', 'jsonpath={.data.ca\\.crt}']);
  if (r.code !== 0) throw new Error(`kubectl get secret failed: ${r.stderr}`);
  return Buffer.from(r.stdout, 'base64').toString('utf8');
}

const certificates = (pem: string): string[] =>
  pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];

describe("the gateway's CA, published to its clients' namespaces", () => {
  let operatorNs: string;
  let clientNs: string;
  let client: KubeClient;
  let settings: GatewayTlsSettings;
  let proc: RunningProcess;
  const stop = new AbortController();

  beforeAll(async () => {
    [operatorNs, clientNs] = await Promise.all([
      createTestNamespace('eo-system'),
      createTestNamespace('gateway-client'),
    ]);
    client = testClient();
    await installCrds(client);
    settings = { ...DEFAULT_GATEWAY_TLS, namespace: operatorNs };
    proc = await startOperatorProcess(
      client,
      {
        operator: {
          project: '{namespace}',
          location: 'europe-west4',
          namespaces: [operatorNs, clientNs],
          workers: 2,
          leaderElection: { enabled: false, namespace: operatorNs, leaseName: 'endpoint-operator' },
        },
        gatewayTls: settings,
      },
      pino({ level: process.env['EO_TEST_OPERATOR_LOG'] ?? 'silent' }),
      stop.signal,
    );
    await proc.operator.ready;
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    stop.abort();
    client?.close();
  });

  it("appears in a new namespace once a PredictionEndpoint is applied there, holding the Secret's ca.crt", async () => {
    expect(await publishedCa(clientNs)).toBeUndefined();
    await apply(
      clientNs,
      'apiVersion: prediction.endpoint-operator.dev/v1\nkind: PredictionEndpoint\nmetadata: { name: fraud }\nspec: { displayName: Fraud }\n',
    );
    const ca = await eventually('the CA ConfigMap in the client namespace', () => publishedCa(clientNs));
    expect(ca).toBe(await secretCa(operatorNs, settings.secretName));
    expect(ca).toBe(proc.gatewayCertificate?.current().caBundle);
    // The operator's own namespace has no PredictionEndpoint: nothing is published there.
    expect(await publishedCa(operatorNs)).toBeUndefined();
  }, 60_000);

  it('follows the Secret when the CA rotates: the new CA first, the old one still trusted', async () => {
    const before = await eventually('the CA ConfigMap', () => publishedCa(clientNs));
    // A replica whose clock is near the CA's end renews everything, as the renewal loop will then.
    const later = Date.now() + 3000 * DAY;
    const rotated = await ensureGatewayCertificate(client, settings, { clock: { now: () => later } });
    expect(certificates(rotated.caBundle)[0]).not.toBe(certificates(before)[0]);
    const after = await eventually('the rotated CA in the ConfigMap', async () => {
      const ca = await publishedCa(clientNs);
      return ca !== before && ca;
    });
    expect(after).toBe(rotated.caBundle);
    expect(certificates(after)).toEqual([certificates(rotated.caBundle)[0], certificates(before)[0]]);
  }, 60_000);

  it("goes away with the namespace's last PredictionEndpoint", async () => {
    const r = await kubectl(['delete', 'predictionendpoint', '-n', clientNs, 'fraud', '--wait=true', '--timeout=30s'], {
      timeoutMs: 40_000,
    });
    expect(r.code, r.stderr).toBe(0);
    await eventually('the CA ConfigMap removed', async () => (await publishedCa(clientNs)) === undefined);
  }, 60_000);
});

describe("the gateway's CA from a Secret another issuer writes (cert-manager's shape)", () => {
  let operatorNs: string;
  let clientNs: string;
  let client: KubeClient;
  let proc: RunningProcess;
  const stop = new AbortController();
  const SECRET = 'gateway-cert';

  /** What cert-manager writes for a Certificate: kubernetes.io/tls with ca.crt, and no ca.key. */
  const issue = async (ns: string, caName: string): Promise<string> => {
    const own = await ensureGatewayCertificate(new FakeApi(), { ...DEFAULT_GATEWAY_TLS, namespace: caName });
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    await apply(
      ns,
      yaml.dump({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: SECRET },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': b64(own.cert), 'tls.key': b64(own.key), 'ca.crt': b64(own.caBundle) },
      }),
    );
    return own.caBundle;
  };

  beforeAll(async () => {
    [operatorNs, clientNs] = await Promise.all([
      createTestNamespace('eo-system'),
      createTestNamespace('gateway-client'),
    ]);
    client = testClient();
    await installCrds(client);
    proc = await startOperatorProcess(
      client,
      {
        operator: {
          project: '{namespace}',
          location: 'europe-west4',
          namespaces: [operatorNs, clientNs],
          workers: 2,
          leaderElection: { enabled: false, namespace: operatorNs, leaseName: 'endpoint-operator' },
        },
        gatewayTls: { ...DEFAULT_GATEWAY_TLS, issuer: 'external', namespace: operatorNs, secretName: SECRET },
      },
      pino({ level: process.env['EO_TEST_OPERATOR_LOG'] ?? 'silent' }),
      stop.signal,
    );
    await proc.operator.ready;
  }, 120_000);

  afterAll(async () => {
    await proc?.stop();
    stop.abort();
    client?.close();
  });

  it('publishes its ca.crt once it exists, follows its changes, and never writes the Secret', async () => {
    expect(proc.gatewayCertificate).toBeUndefined();
    await apply(
      clientNs,
      'apiVersion: registry.endpoint-operator.dev/v1\nkind: RegistryService\nmetadata: { name: checkout }\nspec: { name: projects/shop-platform/locations/europe-west1/namespaces/payments/services/gateway-ca-external }\n',
    );
    // No Secret yet (the issuer has not issued): nothing to publish, and the operator does not make one.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await publishedCa(clientNs)).toBeUndefined();
    const absent = await kubectl(['get', 'secret', '-n', operatorNs, SECRET, '--ignore-not-found', '-o', 'name']);
    expect(absent.stdout.trim()).toBe('');

    const first = await issue(operatorNs, 'issuer-1');
    expect(await eventually('the CA ConfigMap', () => publishedCa(clientNs))).toBe(first);
    const second = await issue(operatorNs, 'issuer-2');
    expect(await eventually('the new CA', async () => (await publishedCa(clientNs)) === second && second)).toBe(second);
    const keys = await kubectl(['get', 'secret', '-n', operatorNs, SECRET, '-o', 'jsonpath={.data}']);
    expect(Object.keys(JSON.parse(keys.stdout) as object).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
  }, 60_000);
});
