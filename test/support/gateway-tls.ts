/**
 * A CA and a serving certificate for a gateway under test (the same issuing code the operator uses), and the CA
 * as the clients' trust: the tests trust it the way users are told to, never by turning verification off.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificates, servingIdentity } from '../../src/webhook/certificates.js';

export interface TestGatewayTls {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
}

export async function testGatewayTls(): Promise<TestGatewayTls> {
  const bundle = await issueCertificates(
    { action: 'renew-all', reason: 'test' },
    undefined,
    servingIdentity('endpoint-operator-gateway', 'endpoint-operator-system', { host: '127.0.0.1' }),
    new Date(),
    { caDays: 365, servingDays: 90 },
  );
  return { cert: bundle.cert, key: bundle.key, ca: bundle.caCert };
}

/** `tls` written as files for a process that reads them; `remove` deletes them when the test is done with them. */
export interface TestGatewayTlsFiles {
  /** The CA (GATEWAY_CA, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, REQUESTS_CA_BUNDLE). */
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  remove(): Promise<void>;
}

export async function writeGatewayTlsFiles(tls: TestGatewayTls): Promise<TestGatewayTlsFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'eo-gateway-tls-'));
  const files = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  await Promise.all([
    writeFile(files.caFile, tls.ca),
    writeFile(files.certFile, tls.cert),
    writeFile(files.keyFile, tls.key, { mode: 0o600 }),
  ]);
  return { ...files, remove: () => rm(dir, { recursive: true, force: true }) };
}
