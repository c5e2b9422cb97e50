import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { watchServingCertificate, type ServingCertificate } from '../../../../src/gateway/tls/serving-certificate.js';
import { issueCertificates } from '../../../../src/webhook/certificates.js';
import { capture } from '../../../support/log-lines.js';
import { metricsRegistry } from '../../../../src/base/metrics.js';

const EXPIRY = 'endpoint_operator_gateway_certificate_expiration_timestamp_seconds';

const identity = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] };
async function newPair(servingDays: number): Promise<ServingCertificate> {
  const validity = { caDays: 30, servingDays };
  const b = await issueCertificates({ action: 'renew-all', reason: 'test' }, undefined, identity, new Date(), validity);
  return { cert: b.cert, key: b.key };
}

/** A Secret volume as kubelet lays it out: files are symlinks through `..data`, swapped atomically to a new directory. */
class SecretVolume {
  private generation = 0;
  constructor(readonly dir: string) {}
  get certFile(): string {
    return join(this.dir, 'tls.crt');
  }
  get keyFile(): string {
    return join(this.dir, 'tls.key');
  }
  async publish(pair: ServingCertificate): Promise<void> {
    const data = `..${++this.generation}`;
    await mkdir(join(this.dir, data));
    await writeFile(join(this.dir, data, 'tls.crt'), pair.cert);
    await writeFile(join(this.dir, data, 'tls.key'), pair.key);
    await symlink(data, join(this.dir, '..data_tmp'));
    await rename(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    if (this.generation === 1) {
      await symlink('..data/tls.crt', this.certFile);
      await symlink('..data/tls.key', this.keyFile);
    }
  }
}

let pairA: ServingCertificate;
let pairB: ServingCertificate;
const dirs: string[] = [];
beforeAll(async () => {
  [pairA, pairB] = await Promise.all([newPair(10), newPair(11)]);
});
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'eo-serving-cert-'));
  dirs.push(dir);
  return dir;
}

describe('watchServingCertificate', () => {
  it('takes a rotated Secret volume (the ..data symlink swapped) and tells its listeners once', async () => {
    const volume = new SecretVolume(await tempDir());
    await volume.publish(pairA);
    const watch = await watchServingCertificate({
      certFile: volume.certFile,
      keyFile: volume.keyFile,
      log: pino({ level: 'silent' }),
    });
    try {
      expect(watch.current()).toEqual(pairA);
      const seen: ServingCertificate[] = [];
      watch.onChange((pair) => seen.push(pair));
      expect(await watch.reload()).toBe(false);

      await volume.publish(pairB);
      expect(await watch.reload()).toBe(true);
      expect(watch.current()).toEqual(pairB);
      // The expiry exported is the certificate's now presented.
      const expiry = await metricsRegistry.getSingleMetric(EXPIRY)?.get();
      expect(expiry?.values[0]?.value).toBe(Date.parse(new X509Certificate(pairB.cert).validTo) / 1000);
      expect(await watch.reload()).toBe(false);
      expect(seen).toEqual([pairB]);
    } finally {
      await watch.close();
    }
  });

  it('keeps the pair in use while the files are half written (a new certificate, the old key), logging that once', async () => {
    const dir = await tempDir();
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    await writeFile(certFile, pairA.cert);
    await writeFile(keyFile, pairA.key);
    const logs = capture();
    const watch = await watchServingCertificate({ certFile, keyFile, log: pino({ level: 'info' }, logs.stream) });
    try {
      const seen: ServingCertificate[] = [];
      watch.onChange((pair) => seen.push(pair));

      await writeFile(certFile, pairB.cert);
      expect(await watch.reload()).toBe(false);
      expect(await watch.reload()).toBe(false);
      // Truncated mid-write: not PEM at all.
      await writeFile(keyFile, pairB.key.slice(0, 40));
      expect(await watch.reload()).toBe(false);
      expect(watch.current()).toEqual(pairA);
      expect(seen).toEqual([]);
      const warnings = logs.lines().filter((l) => l.level === 40);
      expect(warnings.map((l) => l.msg)).toEqual([
        'serving certificate files are not a usable pair (yet); keeping the pair in use',
        'serving certificate files are not a usable pair (yet); keeping the pair in use',
      ]);
      expect(String(warnings[0]?.problem)).toMatch(/key values mismatch/);

      await writeFile(keyFile, pairB.key);
      expect(await watch.reload()).toBe(true);
      expect(watch.current()).toEqual(pairB);
      expect(seen).toEqual([pairB]);
    } finally {
      await watch.close();
    }
  });

  it('keeps the pair in use while a file is missing', async () => {
    const dir = await tempDir();
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    await writeFile(certFile, pairA.cert);
    await writeFile(keyFile, pairA.key);
    const watch = await watchServingCertificate({ certFile, keyFile, log: pino({ level: 'silent' }) });
    try {
      await rm(keyFile);
      expect(await watch.reload()).toBe(false);
      expect(watch.current()).toEqual(pairA);
    } finally {
      await watch.close();
    }
  });

  it('refuses to start from a pair that does not belong together', async () => {
    const dir = await tempDir();
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    await writeFile(certFile, pairA.cert);
    await writeFile(keyFile, pairB.key);
    await expect(watchServingCertificate({ certFile, keyFile, log: pino({ level: 'silent' }) })).rejects.toThrow(
      /not a usable pair/,
    );
  });

  it('polls on its own', async () => {
    const dir = await tempDir();
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    await writeFile(certFile, pairA.cert);
    await writeFile(keyFile, pairA.key);
    const watch = await watchServingCertificate({
      certFile,
      keyFile,
      log: pino({ level: 'silent' }),
      pollIntervalMs: 10,
    });
    try {
      const changed = new Promise<ServingCertificate>((resolve) => watch.onChange(resolve));
      await writeFile(keyFile, pairB.key);
      await writeFile(certFile, pairB.cert);
      expect(await changed).toEqual(pairB);
    } finally {
      await watch.close();
    }
  });
});
