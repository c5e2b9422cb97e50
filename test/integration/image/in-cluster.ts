/**
 * What the kubelet gives a pod and the image tests give its container: a ServiceAccount token from the
 * TokenRequest API (`kubectl create token`),
 * the cluster CA and the namespace, as files under /var/run/secrets/kubernetes.io/serviceaccount.
 */
import { chmod, copyFile, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectl } from '../../support/cluster.js';

/** A bound token of `namespace/serviceAccount` for `audiences` (the API server's own when empty). */
export async function serviceAccountToken(
  kubeconfig: string,
  namespace: string,
  serviceAccount: string,
  audiences: readonly string[] = [],
): Promise<string> {
  const r = await kubectl(
    ['create', 'token', serviceAccount, '-n', namespace, '--duration=1h', ...audiences.map((a) => `--audience=${a}`)],
    { kubeconfig },
  );
  if (r.code !== 0 || r.stdout.trim() === '')
    throw new Error(`TokenRequest for ${namespace}/${serviceAccount} failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** A directory laid out as the kubelet's projected service-account volume, readable by the container's non-root user. */
export async function serviceAccountDir(opts: {
  kubeconfig: string;
  caFile: string;
  namespace: string;
  serviceAccount: string;
}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `eo-sa-${opts.serviceAccount}-`));
  await chmod(dir, 0o755);
  await writeFile(join(dir, 'token'), await serviceAccountToken(opts.kubeconfig, opts.namespace, opts.serviceAccount), {
    mode: 0o644,
  });
  await copyFile(opts.caFile, join(dir, 'ca.crt'));
  await chmod(join(dir, 'ca.crt'), 0o644);
  await writeFile(join(dir, 'namespace'), opts.namespace, { mode: 0o644 });
  return dir;
}
