import 'reflect-metadata'; // @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
import { generateKeyPairSync, randomBytes, webcrypto } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { NODE_HOST_ADDRESS } from './real-node/node-network.js';

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
    for (const [field, value] of [
      ['token', u.token],
      ['user', u.user],
      ['uid', u.uid],
    ] as const) {
      if (value === '' || /[,"\n]/.test(value))
        throw new Error(`token user "${u.user}": ${field} must be non-empty without commas, quotes or newlines`);
    }
    for (const g of u.groups)
      if (/[,"\n]/.test(g) || g === '')
        throw new Error(`token user "${u.user}": group "${g}" must be non-empty without commas, quotes or newlines`);
  }
  return users
    .map((u) => `${u.token},${u.user},${u.uid}${u.groups.length > 0 ? `,"${u.groups.join(',')}"` : ''}\n`)
    .join('');
}

export function randomToken(): string {
  return randomBytes(24).toString('hex');
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

export interface ControlPlaneCredentials {
  readonly caFile: string;
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly serviceAccountPublicKeyFile: string;
  readonly serviceAccountSigningKeyFile: string;
  /** The aggregation layer's front proxy: the CA extension apiservers trust for X-Remote-User, and the apiserver's client certificate. */
  readonly requestHeaderCaFile: string;
  readonly proxyClientCertFile: string;
  readonly proxyClientKeyFile: string;
  /** The apiserver's client certificate towards kubelets (logs, exec, port-forward on the real node). */
  readonly kubeletClientCertFile: string;
  readonly kubeletClientKeyFile: string;
}

/** The name extension apiservers accept the front proxy's client certificate by (--requestheader-allowed-names). */
export const FRONT_PROXY_CLIENT = 'front-proxy-client';

/** The apiserver's name towards kubelets, as kubeadm names it. */
export const KUBELET_CLIENT = 'kube-apiserver-kubelet-client';

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

interface Authority {
  readonly cert: x509.X509Certificate;
  readonly keys: webcrypto.CryptoKeyPair;
}

function validity(): { notBefore: Date; notAfter: Date } {
  // Tolerate small clock differences.
  return { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 365 * 24 * 3600_000) };
}

async function newAuthority(name: string): Promise<Authority> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: `CN=${name}`,
      ...validity(),
      keys,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  return { cert, keys };
}

/** A leaf certificate signed by `ca`: a server's (with its names) or a client's. */
async function newLeaf(
  ca: Authority,
  subject: string,
  usage: 'server' | 'client',
  names: x509.JsonGeneralNames = [],
): Promise<{ cert: x509.X509Certificate; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create(
    {
      subject: `CN=${subject}`,
      issuer: ca.cert.subject,
      ...validity(),
      publicKey: keys.publicKey,
      signingKey: ca.keys.privateKey,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension(
          [usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
          false,
        ),
        ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names, false)] : []),
        await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  return { cert, keyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)) };
}

/**
 * The kube-apiserver's client certificate for the kubelets, beside the CA in `dir`: the kubelet trusts the CA's client
 * certificates only, so a program that reads the kubelet for the cluster (metrics-server) presents this one.
 */
export function kubeletClientFiles(dir: string): { readonly certFile: string; readonly keyFile: string } {
  return { certFile: join(dir, 'apiserver-kubelet-client.crt'), keyFile: join(dir, 'apiserver-kubelet-client.key') };
}

/**
 * A throw-away CA and a serving certificate for 127.0.0.1/localhost signed by it, so clients verify the
 * apiserver against `caFile` instead of skipping TLS verification; the RSA key pair that signs and
 * verifies service-account tokens (the apiserver requires both flags); and a second CA with the front
 * proxy's client certificate, so extension apiservers (a custom-metrics adapter) can be aggregated.
 */
export async function writeCredentials(dir: string): Promise<ControlPlaneCredentials> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const ca = await newAuthority('endpoint-operator dev control plane CA');
  const server = await newLeaf(ca, 'kube-apiserver', 'server', [
    { type: 'ip', value: '127.0.0.1' },
    // The `kubernetes` Service's cluster IP (the first of SERVICE_CLUSTER_IP_RANGE) and the real node's way in
    // (node-apiserver.ts): pods on the real node verify the apiserver by these.
    { type: 'ip', value: '198.19.0.1' },
    { type: 'ip', value: NODE_HOST_ADDRESS },
    { type: 'dns', value: 'localhost' },
    { type: 'dns', value: 'kubernetes.default.svc' },
  ]);
  const frontProxyCa = await newAuthority('endpoint-operator dev front-proxy CA');
  const proxyClient = await newLeaf(frontProxyCa, FRONT_PROXY_CLIENT, 'client');
  const kubeletClient = await newLeaf(ca, KUBELET_CLIENT, 'client');

  const kubeletClientPaths = kubeletClientFiles(dir);
  const files: ControlPlaneCredentials = {
    caFile: join(dir, 'ca.crt'),
    tlsCertFile: join(dir, 'apiserver.crt'),
    tlsKeyFile: join(dir, 'apiserver.key'),
    serviceAccountPublicKeyFile: join(dir, 'sa.pub'),
    serviceAccountSigningKeyFile: join(dir, 'sa.key'),
    requestHeaderCaFile: join(dir, 'front-proxy-ca.crt'),
    proxyClientCertFile: join(dir, 'front-proxy-client.crt'),
    proxyClientKeyFile: join(dir, 'front-proxy-client.key'),
    kubeletClientCertFile: kubeletClientPaths.certFile,
    kubeletClientKeyFile: kubeletClientPaths.keyFile,
  };
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFile(files.caFile, ca.cert.toString('pem') + '\n');
  await writeFile(files.tlsCertFile, server.cert.toString('pem') + '\n');
  await writeFile(files.tlsKeyFile, server.keyPem, { mode: 0o600 });
  await writeFile(files.serviceAccountPublicKeyFile, sa.publicKey.export({ type: 'spki', format: 'pem' }));
  await writeFile(files.serviceAccountSigningKeyFile, sa.privateKey.export({ type: 'pkcs8', format: 'pem' }), {
    mode: 0o600,
  });
  await writeFile(files.requestHeaderCaFile, frontProxyCa.cert.toString('pem') + '\n');
  await writeFile(files.proxyClientCertFile, proxyClient.cert.toString('pem') + '\n');
  await writeFile(files.proxyClientKeyFile, proxyClient.keyPem, { mode: 0o600 });
  await writeFile(files.kubeletClientCertFile, kubeletClient.cert.toString('pem') + '\n');
  await writeFile(files.kubeletClientKeyFile, kubeletClient.keyPem, { mode: 0o600 });
  return files;
}
