import 'reflect-metadata'; // @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
import { generateKeyPairSync, randomBytes, webcrypto } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

/** A bearer token the apiserver accepts (a line of --token-auth-file). */
export interface TokenUser {
  readonly token: string;
  readonly user: string;
  readonly uid: string;
  readonly groups: readonly string[];
}

/** The CSV of --token-auth-file: `token,user,uid,"group1,group2"`. */
export function renderTokenFile(users: readonly TokenUser[]): string {
  for (const u of users) {
    for (const [field, value] of [['token', u.token], ['user', u.user], ['uid', u.uid]] as const) {
      if (value === '' || /[,"\n]/.test(value)) throw new Error(`token user "${u.user}": ${field} must be non-empty without commas, quotes or newlines`);
    }
    for (const g of u.groups) if (/[,"\n]/.test(g) || g === '') throw new Error(`token user "${u.user}": group "${g}" must be non-empty without commas, quotes or newlines`);
  }
  return users.map((u) => `${u.token},${u.user},${u.uid}${u.groups.length > 0 ? `,"${u.groups.join(',')}"` : ''}\n`).join('');
}

export function randomToken(): string {
  return randomBytes(24).toString('hex');
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

export interface ControlPlaneCredentials {
  readonly caFile: string;
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly serviceAccountPublicKeyFile: string;
  readonly serviceAccountSigningKeyFile: string;
}

/**
 * A throw-away CA and a serving certificate for 127.0.0.1/localhost signed by it, so clients verify the
 * apiserver against `caFile` instead of skipping TLS verification; and the RSA key pair that signs and
 * verifies service-account tokens (the apiserver requires both flags).
 */
export async function writeCredentials(dir: string): Promise<ControlPlaneCredentials> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const subtle = webcrypto.subtle;
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const now = new Date(Date.now() - 60_000); // tolerate small clock differences
  const notAfter = new Date(Date.now() + 365 * 24 * 3600_000);

  const caKeys = (await subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: 'CN=endpoint-operator dev control plane CA',
      notBefore: now,
      notAfter,
      keys: caKeys,
      signingAlgorithm: alg,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  const serverKeys = (await subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const server = await x509.X509CertificateGenerator.create(
    {
      subject: 'CN=kube-apiserver',
      issuer: ca.subject,
      notBefore: now,
      notAfter,
      publicKey: serverKeys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: alg,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
        new x509.SubjectAlternativeNameExtension(
          [
            { type: 'ip', value: '127.0.0.1' },
            { type: 'dns', value: 'localhost' },
            { type: 'dns', value: 'kubernetes.default.svc' },
          ],
          false,
        ),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );

  const files: ControlPlaneCredentials = {
    caFile: join(dir, 'ca.crt'),
    tlsCertFile: join(dir, 'apiserver.crt'),
    tlsKeyFile: join(dir, 'apiserver.key'),
    serviceAccountPublicKeyFile: join(dir, 'sa.pub'),
    serviceAccountSigningKeyFile: join(dir, 'sa.key'),
  };
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFile(files.caFile, ca.toString('pem') + '\n');
  await writeFile(files.tlsCertFile, server.toString('pem') + '\n');
  await writeFile(files.tlsKeyFile, pem('PRIVATE KEY', await subtle.exportKey('pkcs8', serverKeys.privateKey)), { mode: 0o600 });
  await writeFile(files.serviceAccountPublicKeyFile, sa.publicKey.export({ type: 'spki', format: 'pem' }));
  await writeFile(files.serviceAccountSigningKeyFile, sa.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return files;
}
