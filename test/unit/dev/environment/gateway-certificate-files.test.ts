import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  devGatewayTlsDir,
  gatewayCaPath,
  prepareGatewayCertificateFiles,
  writeGatewayCertificateFiles,
} from '../../../../dev/environment/gateway-certificate-files.js';
import { watchServingCertificate } from '../../../../src/gateway/tls/serving-certificate.js';
import { DEFAULT_GATEWAY_TLS, ensureGatewayCertificate } from '../../../../src/operator/gateway-certificate.js';
import { ManualClock } from '../../../support/manual-clock.js';
import { FakeApi } from '../../webhook/fake-api.js';

const settings = { ...DEFAULT_GATEWAY_TLS, namespace: 'endpoint-operator-system' };
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe("dev's gateway certificate files", () => {
  it("hold the Secret's pair and CA, the key readable by its owner only, and follow a renewal the gateway then reloads", async () => {
    const root = await mkdtemp(join(tmpdir(), 'eo-dev-tls-'));
    dirs.push(root);
    const dir = join(root, 'gateway-tls');
    const api = new FakeApi();
    const clock = new ManualClock(Date.now());
    const files = await prepareGatewayCertificateFiles(api, settings, dir);
    const issued = await ensureGatewayCertificate(api, settings, { clock });
    expect(await readFile(files.certFile, 'utf8')).toBe(issued.cert);
    expect(await readFile(files.keyFile, 'utf8')).toBe(issued.key);
    expect(await readFile(gatewayCaPath(dir), 'utf8')).toBe(issued.caBundle);
    expect((await stat(files.keyFile)).mode & 0o777).toBe(0o600);

    const watch = await watchServingCertificate({ ...files, log: pino({ level: 'silent' }) });
    try {
      await clock.advance(300 * 86_400_000);
      const renewed = await ensureGatewayCertificate(api, settings, { clock });
      await writeGatewayCertificateFiles(dir, renewed);
      expect(await watch.reload()).toBe(true);
      expect(watch.current()).toEqual({ cert: renewed.cert, key: renewed.key });
    } finally {
      await watch.close();
    }
  });

  it('are kept per cluster: a second dev on another cluster cannot replace the certificate the first serves', async () => {
    const home = await mkdtemp(join(tmpdir(), 'eo-dev-tls-home-'));
    dirs.push(home);
    const previous = process.env['EO_CACHE_DIR'];
    process.env['EO_CACHE_DIR'] = home;
    try {
      const first = devGatewayTlsDir('/tmp/eo-control-plane-aaaaaa/kubeconfig', 'endpoint-operator-system');
      const second = devGatewayTlsDir('/tmp/eo-control-plane-bbbbbb/kubeconfig', 'endpoint-operator-system');
      expect(first.startsWith(home)).toBe(true);
      expect(second).not.toBe(first);
      // Another operator namespace is another Secret, so another certificate.
      expect(devGatewayTlsDir('/tmp/eo-control-plane-aaaaaa/kubeconfig', 'ops')).not.toBe(first);
      // One cluster and namespace, one Secret: the same files, however the path is spelled.
      expect(devGatewayTlsDir('/tmp/../tmp/eo-control-plane-aaaaaa/kubeconfig', 'endpoint-operator-system')).toBe(
        first,
      );

      // Two clusters, two CAs: the first's files stay what the first gateway serves after the second start.
      const one = await prepareGatewayCertificateFiles(new FakeApi(), settings, first);
      const served = await readFile(one.certFile, 'utf8');
      const two = await prepareGatewayCertificateFiles(new FakeApi(), settings, second);
      expect(await readFile(two.caFile, 'utf8')).not.toBe(await readFile(one.caFile, 'utf8'));
      expect(await readFile(one.certFile, 'utf8')).toBe(served);
    } finally {
      if (previous === undefined) delete process.env['EO_CACHE_DIR'];
      else process.env['EO_CACHE_DIR'] = previous;
    }
  });
});
