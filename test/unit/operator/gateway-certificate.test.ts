import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GATEWAY_TLS,
  ensureGatewayCertificate,
  type GatewayTlsSettings,
} from '../../../src/operator/gateway-certificate.js';
import { ManualClock } from '../../support/manual-clock.js';
import { FakeApi } from '../webhook/fake-api.js';

const DAY = 86_400_000;
const settings: GatewayTlsSettings = { ...DEFAULT_GATEWAY_TLS, namespace: 'eo-system' };
const SECRET = 'secrets/eo-system/endpoint-operator-gateway-tls';

interface Secret {
  type: string;
  metadata: { labels: Record<string, string> };
  data: Record<string, string>;
}
const text = (b64: string | undefined): string => Buffer.from(b64 ?? '', 'base64').toString('utf8');

describe('the gateway certificate', () => {
  it("is a kubernetes.io/tls Secret whose leaf names the Service, its namespace forms and loopback, from the gateway's own CA", async () => {
    const api = new FakeApi();
    const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const certs = await ensureGatewayCertificate(api, settings, { clock });
    const secret = api.read<Secret>(SECRET);
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(secret.metadata.labels['app.kubernetes.io/component']).toBe('gateway');
    expect(Object.keys(secret.data).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    expect(text(secret.data['tls.crt'])).toBe(certs.cert);
    expect(text(secret.data['ca.crt'])).toBe(certs.caBundle);

    const leaf = new x509.X509Certificate(certs.cert);
    const names = leaf.getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON() ?? [];
    expect(names.filter((n) => n.type === 'dns').map((n) => n.value)).toEqual([
      'endpoint-operator-gateway',
      'endpoint-operator-gateway.eo-system',
      'endpoint-operator-gateway.eo-system.svc',
      'endpoint-operator-gateway.eo-system.svc.cluster.local',
      'localhost',
    ]);
    expect(names.filter((n) => n.type === 'ip').map((n) => n.value)).toEqual(['127.0.0.1', '::1']);
    const ca = new x509.X509Certificate(certs.caBundle);
    expect(ca.subject).toMatch(/^CN=endpoint-operator-gateway-ca@/);
    expect(await leaf.verify({ publicKey: ca.publicKey, signatureOnly: true })).toBe(true);
  });

  it('is reused as stored (no write) until a third of its life is left, then re-issued from the same CA', async () => {
    const api = new FakeApi();
    const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
    const first = await ensureGatewayCertificate(api, settings, { clock });
    api.calls.length = 0;
    // The names read back from the stored leaf (IPv6 included) equal the wanted ones: nothing is written.
    expect(await ensureGatewayCertificate(api, settings, { clock })).toEqual(first);
    expect(api.writes()).toEqual([]);

    await clock.advance(250 * DAY);
    const renewed = await ensureGatewayCertificate(api, settings, { clock });
    expect(renewed.cert).not.toBe(first.cert);
    expect(renewed.caBundle).toBe(first.caBundle);
    expect(api.writes().map((c) => c.verb)).toEqual(['replace']);
  });
});
