import { X509Certificate, createPrivateKey, createPublicKey, createSign, createVerify } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeCredentials } from '../../../../dev/cluster/credentials.js';

describe('writeCredentials', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('writes a CA and a 127.0.0.1 serving certificate it signed, a front-proxy CA and client certificate, and a matching RSA service-account key pair', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eo-creds-'));
    dirs.push(dir);
    const c = await writeCredentials(dir);
    const ca = new X509Certificate(await readFile(c.caFile));
    const server = new X509Certificate(await readFile(c.tlsCertFile));
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.checkHost('localhost')).toBe('localhost');
    expect(server.checkPrivateKey(createPrivateKey(await readFile(c.tlsKeyFile)))).toBe(true);

    // The front proxy's client certificate: its own CA (not the cluster CA), named as --requestheader-allowed-names says.
    const frontProxyCa = new X509Certificate(await readFile(c.requestHeaderCaFile));
    const proxyClient = new X509Certificate(await readFile(c.proxyClientCertFile));
    expect(proxyClient.checkIssued(frontProxyCa)).toBe(true);
    expect(proxyClient.checkIssued(ca)).toBe(false);
    expect(proxyClient.subject).toBe('CN=front-proxy-client');
    expect(proxyClient.keyUsage).toContain('1.3.6.1.5.5.7.3.2');
    expect(proxyClient.checkPrivateKey(createPrivateKey(await readFile(c.proxyClientKeyFile)))).toBe(true);

    const saKey = createPrivateKey(await readFile(c.serviceAccountSigningKeyFile));
    expect(saKey.asymmetricKeyType).toBe('rsa');
    const signature = createSign('sha256').update('token').sign(saKey);
    expect(
      createVerify('sha256')
        .update('token')
        .verify(createPublicKey(await readFile(c.serviceAccountPublicKeyFile)), signature),
    ).toBe(true);
  });
});
