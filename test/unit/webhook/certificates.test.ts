import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  issueCertificates,
  needsRenewal,
  nextRenewalCheck,
  planCertificates,
  servingIdentity,
} from '../../../src/webhook/certificates.js';

const DAY = 86_400_000;
const t0 = new Date('2026-03-01T00:00:00Z');
const at = (days: number): Date => new Date(t0.getTime() + days * DAY);
const validity = { caDays: 30, servingDays: 9 };
const local = servingIdentity('endpoint-operator-webhook', 'endpoint-operator-system', { host: '127.0.0.1' });

async function fresh() {
  const plan = await planCertificates(undefined, local, t0);
  return issueCertificates(plan, undefined, local, t0, validity);
}

describe('servingIdentity', () => {
  it('names the Service the way the API server dials it, and loopback in local mode only', () => {
    expect(servingIdentity('svc', 'ns', undefined)).toEqual({
      dnsNames: ['svc', 'svc.ns', 'svc.ns.svc', 'svc.ns.svc.cluster.local'],
      ipAddresses: [],
    });
    expect(local.ipAddresses).toEqual(['127.0.0.1']);
    expect(local.dnsNames).toContain('localhost');
    expect(servingIdentity('svc', 'ns', { host: '::1' }).ipAddresses).toEqual(['127.0.0.1', '::1']);
  });
});

describe('certificate issuance', () => {
  it('issues a CA and a serving certificate for every name that verify with node:crypto', async () => {
    expect(await planCertificates(undefined, local, t0)).toEqual({
      action: 'renew-all',
      reason: 'no certificates stored yet',
    });
    const bundle = await fresh();
    const ca = new X509Certificate(bundle.caCert);
    const leaf = new X509Certificate(bundle.cert);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(leaf.checkHost('endpoint-operator-webhook.endpoint-operator-system.svc')).toBe(
      'endpoint-operator-webhook.endpoint-operator-system.svc',
    );
    expect(leaf.checkHost('evil.example.com')).toBeUndefined();
    expect(new Date(leaf.validTo).getTime()).toBe(at(9).getTime());
    expect(bundle.caBundle).toBe(bundle.caCert);
    expect(bundle.key).toContain('BEGIN PRIVATE KEY');
  });

  it('reuses certificates with more than a third of their lifetime left', async () => {
    const bundle = await fresh();
    expect(await planCertificates(bundle, local, at(5.9))).toEqual({ action: 'reuse' });
  });

  it('renews only the serving certificate, from the same CA, when less than a third is left', async () => {
    const bundle = await fresh();
    const plan = await planCertificates(bundle, local, at(6.1));
    expect(plan.action).toBe('renew-serving');
    const renewed = await issueCertificates(plan, bundle, local, at(6.1), validity);
    expect(renewed.caCert).toBe(bundle.caCert);
    expect(renewed.caBundle).toBe(bundle.caBundle);
    expect(renewed.cert).not.toBe(bundle.cert);
    expect(new X509Certificate(renewed.cert).verify(new X509Certificate(bundle.caCert).publicKey)).toBe(true);
    expect(await planCertificates(renewed, local, at(6.1))).toEqual({ action: 'reuse' });
  });

  it('renews everything when the CA nears expiry, keeping the old CA in the bundle while it is valid', async () => {
    const bundle = await fresh();
    const plan = await planCertificates(bundle, local, at(21));
    expect(plan.action).toBe('renew-all');
    const renewed = await issueCertificates(plan, bundle, local, at(21), validity);
    expect(renewed.caCert).not.toBe(bundle.caCert);
    expect(renewed.caBundle).toContain(renewed.caCert.trim());
    expect(renewed.caBundle).toContain(bundle.caCert.trim());
    const expired = await issueCertificates({ action: 'renew-all', reason: 'test' }, bundle, local, at(31), validity);
    expect(expired.caBundle).toBe(expired.caCert);
  });

  it('never issues a serving certificate that outlives its CA', async () => {
    const bundle = await issueCertificates({ action: 'renew-all', reason: 'test' }, undefined, local, t0, {
      caDays: 5,
      servingDays: 9,
    });
    expect(new X509Certificate(bundle.cert).validTo).toBe(new X509Certificate(bundle.caCert).validTo);
  });

  it('re-issues the serving certificate when the names it must cover change', async () => {
    const bundle = await fresh();
    const inCluster = servingIdentity('endpoint-operator-webhook', 'endpoint-operator-system', undefined);
    expect(await planCertificates(bundle, inCluster, t0)).toEqual({
      action: 'renew-serving',
      reason: 'serving certificate names changed',
    });
  });

  it('starts over when the stored material is unreadable or does not belong together', async () => {
    const bundle = await fresh();
    expect((await planCertificates({ ...bundle, caKey: 'garbage' }, local, t0)).action).toBe('renew-all');
    expect((await planCertificates({ ...bundle, cert: 'not a cert' }, local, t0)).action).toBe('renew-all');
    const other = await fresh();
    expect(await planCertificates({ ...bundle, cert: other.cert, key: other.key }, local, t0)).toEqual({
      action: 'renew-serving',
      reason: 'serving certificate is not signed by the stored CA',
    });
  });

  it('schedules the next check at the serving certificate renewal point', async () => {
    const bundle = await fresh();
    // notBefore is backdated 5 minutes for clock skew, so the point is 2/3 into [t0 - 5min, t0 + 9d].
    const lifetime = 9 * DAY + 5 * 60_000;
    expect(nextRenewalCheck(bundle).getTime()).toBe(at(9).getTime() - lifetime / 3);
  });
});

describe('needsRenewal', () => {
  it('is true exactly when less than a third of the lifetime is left', () => {
    expect(needsRenewal(at(0), at(30), at(19.9))).toBe(false);
    expect(needsRenewal(at(0), at(30), at(20.1))).toBe(true);
    expect(needsRenewal(at(0), at(30), at(40))).toBe(true);
  });
});
