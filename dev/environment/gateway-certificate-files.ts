/**
 * `endpoint-operator-dev start`'s gateway certificate on disk: the operator's own (the same Secret, CA and rotation
 * as under `run`, src/operator/gateway-certificate.ts), written as files under the dev run's directory so the
 * in-process gateway reads them as a pod reads its mounted Secret (src/gateway/tls/serving-certificate.ts),
 * and so a person's curl, Python or Go client can be pointed at the CA (`export GATEWAY_CA=<caFile>`).
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { cacheRoot } from '../host/paths.js';
import type { ManagedGatewayCertificate } from '../../src/operator/gateway-certificate.js';
import { ensureGatewayCertificate, type GatewayTlsSettings } from '../../src/operator/gateway-certificate.js';
import type { ServingCertificates, WebhookKubeApi } from '../../src/webhook/certificate-secret.js';

export interface GatewayCertificateFiles {
  readonly dir: string;
  /** `tls.crt`: the serving certificate (PEM). */
  readonly certFile: string;
  /** `tls.key`: its key (PEM, readable by the owner only). */
  readonly keyFile: string;
  /** `ca.crt`: what clients trust; during a CA rotation the new CA and the old one. */
  readonly caFile: string;
}

/** The files' paths under `dir` (the names of a kubernetes.io/tls Secret's keys). */
export function gatewayCertificatePaths(dir: string): GatewayCertificateFiles {
  return { dir, certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), caFile: join(dir, 'ca.crt') };
}

/**
 * Where `endpoint-operator-dev start` keeps the files: under the project's cache directory, in a directory of the
 * cluster's own (its kubeconfig and the operator's namespace, whose Secret holds the pair). Two `dev`s on two
 * clusters then never overwrite each other's certificate (one dir for all let a second start's certificate,
 * from another CA, replace the one the first gateway and its callers were using); two on one cluster share one
 * Secret, so the same files.
 */
export function devGatewayTlsDir(kubeconfig: string, operatorNamespace: string): string {
  const key = createHash('sha256')
    .update(`${resolve(kubeconfig)}\n${operatorNamespace}`)
    .digest('hex')
    .slice(0, 16);
  return join(cacheRoot(), 'dev', 'gateway-tls', key);
}

/** The CA file clients trust (`export GATEWAY_CA=<this>`). */
export function gatewayCaPath(dir: string): string {
  return gatewayCertificatePaths(dir).caFile;
}

/** Each file replaced whole (write, then rename), so no reader sees half a file; the CA first, so clients trust a new leaf before it is served. */
export async function writeGatewayCertificateFiles(
  dir: string,
  certs: ServingCertificates,
): Promise<GatewayCertificateFiles> {
  const files = gatewayCertificatePaths(dir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const put = async (path: string, content: string, mode: number): Promise<void> => {
    await writeFile(`${path}.tmp`, content, { mode });
    await rename(`${path}.tmp`, path);
  };
  await put(files.caFile, certs.caBundle, 0o644);
  await put(files.keyFile, certs.key, 0o600);
  await put(files.certFile, certs.cert, 0o644);
  return files;
}

/**
 * Issues (or reuses) the gateway's certificate in its Secret, as the operator process will find it, and writes
 * the files: called before the in-process gateway starts, which is before the operator process.
 */
export async function prepareGatewayCertificateFiles(
  client: WebhookKubeApi,
  settings: GatewayTlsSettings,
  dir: string,
): Promise<GatewayCertificateFiles> {
  return writeGatewayCertificateFiles(dir, await ensureGatewayCertificate(client, settings));
}

/** Rewrites the files whenever the operator process renews the certificate (the gateway then reloads them). */
export function followGatewayCertificate(managed: ManagedGatewayCertificate, files: GatewayCertificateFiles): void {
  managed.onChange(async (certs) => {
    await writeGatewayCertificateFiles(files.dir, certs);
  });
}
