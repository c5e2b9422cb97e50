/** Real certificates for TLS tests of the client: a CA-signed server certificate and self-signed client certificates. */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { issueCertificates, type CertificateBundle } from '../../../src/webhook/certificates.js';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A server certificate for `dnsName` (not 127.0.0.1: a client must send tls-server-name to verify it). */
export async function serverCertificates(dnsName: string): Promise<CertificateBundle> {
  return issueCertificates(
    { action: 'renew-all', reason: 'test' },
    undefined,
    { dnsNames: [dnsName], ipAddresses: [] },
    new Date(),
    { caDays: 1, servingDays: 1 },
  );
}

export async function selfSignedClientCertificate(commonName: string): Promise<{ cert: string; key: string }> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${commonName}`,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false)],
  });
  const key = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { cert: cert.toString('pem'), key };
}

/** An HTTPS server that asks for a client certificate and passes its CN (or undefined) to `handler`. */
export async function startTlsServer(
  bundle: CertificateBundle,
  handler: (clientCn: string | undefined, req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: https.Server; url: string }> {
  const server = https.createServer(
    { cert: bundle.cert, key: bundle.key, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const cn = peer.subject?.CN;
      handler(typeof cn === 'string' ? cn : undefined, req, res);
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
