/**
 * A CA and a serving certificate for a gateway under test (the same issuing code the operator uses), and the CA
 * as the clients' trust: the tests trust it the way users are told to, never by turning verification off.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificates, servingIdentity } from '../../src/webhook/certificates.js';

export interface TestGatewayTls {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
  /** The CA written to a file (GATEWAY_CA, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, REQUESTS_CA_BUNDLE). */
  readonly caFile: string;
}

export async function testGatewayTls(): Promise<TestGatewayTls> {
  const bundle = await issueCertificates(
    { action: 'renew-all', reason: 'test' },
    undefined,
    servingIdentity('endpoint-operator-gateway', 'endpoint-operator-system', { host: '127.0.0.1' }),
    new Date(),
    { caDays: 365, servingDays: 90 },
  );
  const dir = await mkdtemp(join(tmpdir(), 'eo-gateway-tls-'));
  const caFile = join(dir, 'ca.crt');
  await writeFile(caFile, bundle.caCert);
  return { cert: bundle.cert, key: bundle.key, ca: bundle.caCert, caFile };
}
