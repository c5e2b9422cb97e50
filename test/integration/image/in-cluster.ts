/**
 * What the kubelet gives a pod and the image tests give its container: a ServiceAccount token from the
 * TokenRequest API (1.20's kubectl has no `create token`, so the API is called with `kubectl create --raw`),
 * the cluster CA and the namespace, as files under /var/run/secrets/kubernetes.io/serviceaccount.
 */
import { chmod, copyFile, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectl } from '../../support/cluster.js';

/** A bound token of `namespace/serviceAccount` for `audiences` (the API server's own when empty). */
export async function serviceAccountToken(kubeconfig: string, namespace: string, serviceAccount: string, audiences: readonly string[] = []): Promise<string> {
  const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences, expirationSeconds: 3600 } };
  const r = await kubectl(['create', '--raw', `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, '-f', '-'], { input: JSON.stringify(body), kubeconfig });
  if (r.code !== 0) throw new Error(`TokenRequest for ${namespace}/${serviceAccount} failed: ${r.stderr}`);
  const token = (JSON.parse(r.stdout) as { status?: { token?: string } }).status?.token;
  if (token === undefined) throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token: ${r.stdout}`);
  return token;
}

/** A directory laid out as the kubelet's projected service-account volume, readable by the container's non-root user. */
export async function serviceAccountDir(opts: { kubeconfig: string; caFile: string; namespace: string; serviceAccount: string }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `eo-sa-${opts.serviceAccount}-`));
  await chmod(dir, 0o755);
  await writeFile(join(dir, 'token'), await serviceAccountToken(opts.kubeconfig, opts.namespace, opts.serviceAccount), { mode: 0o644 });
  await copyFile(opts.caFile, join(dir, 'ca.crt'));
  await chmod(join(dir, 'ca.crt'), 0o644);
  await writeFile(join(dir, 'namespace'), opts.namespace, { mode: 0o644 });
  return dir;
}
