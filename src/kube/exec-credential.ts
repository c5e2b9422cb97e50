/**
 * client-go exec credential plugins (client.authentication.k8s.io v1 and v1beta1, KEP-541):
 * the command prints an ExecCredential whose status holds a bearer token or a client
 * certificate, valid until `expirationTimestamp` (or, without one, until the server answers 401).
 * This is how EKS (aws eks get-token), GKE (gke-gcloud-auth-plugin) and AKS (kubelogin) hand out
 * credentials.
 */
import { spawn } from 'node:child_process';
import type { Credentials, CredentialSource } from './credential-source.js';
import { isRecord } from '../api/common/kube-object.js';
import type { ExecPluginConfig, KubeconfigCluster } from './kubeconfig.js';
import { realClock, type Clock } from '../base/clock.js';

const SUPPORTED_API_VERSIONS: ReadonlySet<string> = new Set([
  'client.authentication.k8s.io/v1',
  'client.authentication.k8s.io/v1beta1',
]);

/** A plugin that hangs (waiting for a browser login, say) must not stall every request forever. */
const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_STDOUT_BYTES = 1024 * 1024;
const MAX_STDERR_CHARS = 2000;

export class ExecCredentialPlugin implements CredentialSource {
  private cached: Credentials | undefined;

  constructor(
    private readonly exec: ExecPluginConfig,
    private readonly cluster: KubeconfigCluster,
    /** Names the kubeconfig entry in errors. */
    private readonly describe: string,
    private readonly options: { readonly timeoutMs?: number; readonly clock?: Clock } = {},
  ) {
    if (!SUPPORTED_API_VERSIONS.has(exec.apiVersion)) {
      throw new Error(
        `${describe}.apiVersion: ${exec.apiVersion} is not supported; use client.authentication.k8s.io/v1 (or v1beta1)`,
      );
    }
  }

  async credentials(afresh: boolean): Promise<Credentials> {
    const now = (this.options.clock ?? realClock).now();
    if (this.cached && !afresh && (this.cached.expiresAt === undefined || now < this.cached.expiresAt))
      return this.cached;
    this.cached = parseExecCredential(await this.run(), this.exec.apiVersion, this.describe);
    return this.cached;
  }

  /** KUBERNETES_EXEC_INFO as client-go builds it: never interactive here, cluster details only when asked for. */
  execInfo(): string {
    const c = this.cluster;
    const spec: Record<string, unknown> = { interactive: false };
    if (this.exec.provideClusterInfo) {
      spec.cluster = {
        server: c.server,
        ...(c.tlsServerName !== undefined ? { 'tls-server-name': c.tlsServerName } : {}),
        ...(c.insecureSkipTlsVerify ? { 'insecure-skip-tls-verify': true } : {}),
        ...(c.certificateAuthorityData !== undefined
          ? { 'certificate-authority-data': c.certificateAuthorityData.toString('base64') }
          : {}),
        ...(c.execExtension !== undefined ? { config: c.execExtension } : {}),
      };
    }
    return JSON.stringify({ apiVersion: this.exec.apiVersion, kind: 'ExecCredential', spec });
  }

  private run(): Promise<string> {
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const { name, value } of this.exec.env) env[name] = value;
    env.KUBERNETES_EXEC_INFO = this.execInfo();
    const what = `${this.describe}: the credential plugin ${this.exec.command}`;
    return new Promise((resolve, reject) => {
      const child = spawn(this.exec.command, [...this.exec.args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
      });
      const out: Buffer[] = [];
      let outBytes = 0;
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => {
        outBytes += chunk.length;
        if (outBytes > MAX_STDOUT_BYTES) child.kill('SIGKILL');
        else out.push(chunk);
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => (err = (err + chunk).slice(-MAX_STDERR_CHARS)));
      child.on('error', (e: NodeJS.ErrnoException) => {
        const hint = e.code === 'ENOENT' && this.exec.installHint ? `\n${this.exec.installHint}` : '';
        reject(new Error(`${what} could not be started: ${e.message}${hint}`));
      });
      child.on('close', (code, signal) => {
        if (outBytes > MAX_STDOUT_BYTES) reject(new Error(`${what} printed more than ${MAX_STDOUT_BYTES} bytes`));
        else if (signal !== null)
          reject(
            new Error(
              `${what} was ended by ${signal}${signal === 'SIGKILL' ? ` (no answer within ${timeoutMs} ms?)` : ''}${stderrNote(err)}`,
            ),
          );
        else if (code !== 0) reject(new Error(`${what} exited with status ${code}${stderrNote(err)}`));
        else resolve(Buffer.concat(out).toString('utf8'));
      });
    });
  }
}

function stderrNote(stderr: string): string {
  const s = stderr.trim();
  return s === '' ? '' : `: ${s}`;
}

/** Decodes the plugin's stdout with client-go's checks (same apiVersion, a status with a token or a certificate and key). */
export function parseExecCredential(stdout: string, apiVersion: string, describe: string): Credentials {
  const fail = (problem: string): Error => new Error(`${describe}: the credential plugin's output ${problem}`);
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw fail(`is not JSON: ${stdout.slice(0, 200)}`);
  }
  if (!isRecord(doc) || doc.kind !== 'ExecCredential') throw fail('is not an ExecCredential');
  if (doc.apiVersion !== apiVersion)
    throw fail(`has apiVersion ${String(doc.apiVersion)}, but the kubeconfig asks for ${apiVersion}`);
  const status = doc.status;
  if (!isRecord(status)) throw fail('has no status');
  const token = typeof status.token === 'string' && status.token !== '' ? status.token : undefined;
  const cert =
    typeof status.clientCertificateData === 'string' && status.clientCertificateData !== ''
      ? status.clientCertificateData
      : undefined;
  const key =
    typeof status.clientKeyData === 'string' && status.clientKeyData !== '' ? status.clientKeyData : undefined;
  if ((cert === undefined) !== (key === undefined))
    throw fail('has only one of status.clientCertificateData and status.clientKeyData');
  if (token === undefined && cert === undefined)
    throw fail('has neither status.token nor status.clientCertificateData and clientKeyData');
  let expiresAt: number | undefined;
  if (status.expirationTimestamp !== undefined && status.expirationTimestamp !== null) {
    expiresAt = typeof status.expirationTimestamp === 'string' ? Date.parse(status.expirationTimestamp) : NaN;
    if (Number.isNaN(expiresAt))
      throw fail(`has an invalid status.expirationTimestamp: ${JSON.stringify(status.expirationTimestamp)}`);
  }
  return {
    headers: token !== undefined ? { Authorization: `Bearer ${token}` } : {},
    // PEM text, unlike the kubeconfig's base64 *-data fields.
    ...(cert !== undefined && key !== undefined
      ? { clientCertificate: { cert: Buffer.from(cert), key: Buffer.from(key) } }
      : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
  };
}
