import 'reflect-metadata'; // @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
import * as x509 from '@peculiar/x509';
import { randomBytes, webcrypto } from 'node:crypto';

// Node's webcrypto is a full WebCrypto; the cast only bridges Node's and the DOM's type declarations.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;

/** ECDSA P-256: small keys, fast handshakes, accepted by Go's crypto/tls on every supported Kubernetes. */
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;
/** Backdated so an API server whose clock is slightly behind still accepts a brand-new certificate. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** PEM material as stored in the Secret. */
export interface CertificateBundle {
  readonly caCert: string;
  readonly caKey: string;
  readonly cert: string;
  readonly key: string;
  /**
   * PEM CA certificates the API server should trust: the current CA, plus the previous one while
   * it is still valid after a CA rotation, so certificates signed by either verify during rollout.
   */
  readonly caBundle: string;
}

/** Names the serving certificate must cover. */
export interface ServingIdentity {
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
}

export interface Validity {
  readonly caDays: number;
  readonly servingDays: number;
}

/** The Common Name prefix of the webhook's CA (a new CA is `CN=<prefix>@<unix seconds>`). */
export const WEBHOOK_CA_NAME = 'endpoint-operator-webhook-ca';

/** The names a client inside the cluster reaches a Service by (kube-apiserver uses the `.svc` one for a Service reference). */
export function serviceDnsNames(serviceName: string, namespace: string): string[] {
  return [
    serviceName,
    `${serviceName}.${namespace}`,
    `${serviceName}.${namespace}.svc`,
    `${serviceName}.${namespace}.svc.cluster.local`,
  ];
}

/** The webhook's names: its Service's, plus loopback for local mode. */
export function servingIdentity(
  serviceName: string,
  namespace: string,
  local: { host: string } | undefined,
): ServingIdentity {
  const dnsNames = serviceDnsNames(serviceName, namespace);
  const ipAddresses: string[] = [];
  if (local) {
    dnsNames.push('localhost');
    ipAddresses.push('127.0.0.1');
    if (local.host !== '127.0.0.1' && local.host !== 'localhost')
      (isIp(local.host) ? ipAddresses : dnsNames).push(local.host);
  }
  return { dnsNames, ipAddresses };
}

function isIp(s: string): boolean {
  return /^[0-9.]+$/.test(s) || s.includes(':');
}

function serialNumber(): string {
  // RFC 5280 §4.1.2.2: positive, at most 20 octets; clear the top bit so it is never read as negative.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

async function exportKey(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

async function importKey(pem: string): Promise<CryptoKey> {
  const [der] = x509.PemConverter.decode(pem);
  if (!der) throw new Error('no PEM block in private key');
  return webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, true, ['sign']);
}

async function newCa(now: Date, days: number, caName: string): Promise<{ cert: string; key: string }> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=${caName}@${Math.floor(now.getTime() / 1000)}`,
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(now.getTime() + days * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

async function newServing(
  ca: { cert: string; key: string },
  identity: ServingIdentity,
  now: Date,
  days: number,
): Promise<{ cert: string; key: string }> {
  const caCert = new x509.X509Certificate(ca.cert);
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  // Never outlive the issuing CA: a chain is only as valid as its shortest link.
  const notAfter = Math.min(now.getTime() + days * DAY_MS, caCert.notAfter.getTime());
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${identity.dnsNames[0] ?? 'endpoint-operator-webhook'}`,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(notAfter),
    signingKey: await importKey(ca.key),
    publicKey: keys.publicKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      // Go (and so kube-apiserver) ignores the Common Name since 1.15: only SANs name the server.
      new x509.SubjectAlternativeNameExtension([
        ...identity.dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...identity.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
    ],
  });
  return { cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

export type CertificatePlan =
  | { readonly action: 'reuse' }
  | { readonly action: 'renew-serving'; readonly reason: string }
  | { readonly action: 'renew-all'; readonly reason: string };

/** True when less than a third of the certificate's lifetime is left (cert-manager's default renewBefore). */
export function needsRenewal(notBefore: Date, notAfter: Date, now: Date): boolean {
  const lifetime = notAfter.getTime() - notBefore.getTime();
  return notAfter.getTime() - now.getTime() < lifetime / 3;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
}

/**
 * Decides what to do with the certificates found in the Secret (pure; `now` injected so tests can
 * move the clock): keep them, re-issue the serving certificate from the same CA (the caBundle the
 * API server holds stays valid), or start over with a new CA.
 */
export async function planCertificates(
  existing: CertificateBundle | undefined,
  identity: ServingIdentity,
  now: Date,
): Promise<CertificatePlan> {
  if (!existing) return { action: 'renew-all', reason: 'no certificates stored yet' };
  let ca: x509.X509Certificate;
  let serving: x509.X509Certificate;
  try {
    ca = new x509.X509Certificate(existing.caCert);
    serving = new x509.X509Certificate(existing.cert);
    await importKey(existing.caKey);
  } catch (err) {
    return { action: 'renew-all', reason: `stored certificates are unreadable: ${(err as Error).message}` };
  }
  if (needsRenewal(ca.notBefore, ca.notAfter, now))
    return { action: 'renew-all', reason: `CA expires at ${ca.notAfter.toISOString()}` };
  if (!(await serving.verify({ publicKey: ca.publicKey, signatureOnly: true })))
    return { action: 'renew-serving', reason: 'serving certificate is not signed by the stored CA' };
  if (needsRenewal(serving.notBefore, serving.notAfter, now))
    return { action: 'renew-serving', reason: `serving certificate expires at ${serving.notAfter.toISOString()}` };
  const san = serving.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.toJSON() ?? [];
  const dns = names.filter((n) => n.type === 'dns').map((n) => n.value);
  const ips = names.filter((n) => n.type === 'ip').map((n) => n.value);
  if (!sameSet(dns, identity.dnsNames) || !sameSet(ips, identity.ipAddresses))
    return { action: 'renew-serving', reason: 'serving certificate names changed' };
  return { action: 'reuse' };
}

/**
 * Carries out a plan. The old CA stays in the bundle while it is valid, so a rotation never breaks callers mid-rollout.
 * `caName` names a new CA (its Common Name prefix), so a client's trust store says whose CA it holds.
 */
export async function issueCertificates(
  plan: CertificatePlan,
  existing: CertificateBundle | undefined,
  identity: ServingIdentity,
  now: Date,
  validity: Validity,
  caName: string = WEBHOOK_CA_NAME,
): Promise<CertificateBundle> {
  if (plan.action === 'reuse' && existing) return existing;
  if (plan.action === 'renew-serving' && existing) {
    const serving = await newServing(
      { cert: existing.caCert, key: existing.caKey },
      identity,
      now,
      validity.servingDays,
    );
    return { ...existing, cert: serving.cert, key: serving.key };
  }
  const ca = await newCa(now, validity.caDays, caName);
  const serving = await newServing(ca, identity, now, validity.servingDays);
  const previous = existing && stillValid(existing.caCert, now) ? existing.caCert : undefined;
  const caBundle = previous ? `${ca.cert.trimEnd()}\n${previous.trimEnd()}\n` : ca.cert;
  return { caCert: ca.cert, caKey: ca.key, cert: serving.cert, key: serving.key, caBundle };
}

function stillValid(pem: string, now: Date): boolean {
  try {
    return new x509.X509Certificate(pem).notAfter.getTime() > now.getTime();
  } catch {
    return false;
  }
}

/** When the serving certificate should next be looked at again (its renewal point), for a timer. */
export function nextRenewalCheck(bundle: CertificateBundle): Date {
  const serving = new x509.X509Certificate(bundle.cert);
  const ca = new x509.X509Certificate(bundle.caCert);
  const at = (c: x509.X509Certificate): number =>
    c.notAfter.getTime() - (c.notAfter.getTime() - c.notBefore.getTime()) / 3;
  return new Date(Math.min(at(serving), at(ca)));
}
