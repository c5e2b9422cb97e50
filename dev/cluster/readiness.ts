import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcessGroup } from '../host/child-process-group.js';

export interface HttpResult {
  readonly status: number;
  readonly body: string;
}

/** One HTTPS GET against the apiserver, verifying it with our CA. */
export function apiserverGet(
  server: string,
  path: string,
  opts: { caPem: string; token: string; timeoutMs?: number },
): Promise<HttpResult> {
  return apiserverRequest(server, 'GET', path, opts);
}

/** One HTTPS request against the apiserver (a JSON body when given), verifying it with our CA. */
export function apiserverRequest(
  server: string,
  method: string,
  path: string,
  opts: { caPem: string; token: string; timeoutMs?: number; body?: unknown },
): Promise<HttpResult> {
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, server),
      {
        method,
        ca: opts.caPem,
        headers: {
          Authorization: `Bearer ${opts.token}`,
          Accept: 'application/json',
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        timeout: opts.timeoutMs ?? 5_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

export type ReadyOutcome = { readonly ready: true } | { readonly ready: false; readonly why: string };

/**
 * Polls `probe` until it answers true, the child exits (then there is no point waiting), or time runs out.
 * `lastError` is kept so a timeout says what the last answer was.
 */
export async function waitUntilReady(
  child: ChildProcessGroup,
  probe: () => Promise<true | string>,
  timeoutMs: number,
): Promise<ReadyOutcome> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  for (;;) {
    if (!child.running) return { ready: false, why: `${child.name} exited with status ${String(child.exitStatus)}` };
    try {
      const answer = await probe();
      if (answer === true) return { ready: true };
      last = answer;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline)
      return {
        ready: false,
        why: `${child.name} not ready after ${Math.round(timeoutMs / 1000)} s (last answer: ${last})`,
      };
    await sleep(250);
  }
}

export async function etcdHealthy(endpoint: string): Promise<true | string> {
  const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(3_000) });
  const text = await res.text();
  return res.ok && /"health"\s*:\s*"true"/.test(text) ? true : `${res.status} ${text.slice(0, 200)}`;
}

/**
 * /readyz covers etcd and the post-start hooks (RBAC bootstrap roles, CRD informers); the `default`
 * namespace is created by the apiserver's own bootstrap controller slightly later, and tools assume it.
 */
export async function apiserverReady(server: string, caPem: string, token: string): Promise<true | string> {
  const readyz = await apiserverGet(server, '/readyz', { caPem, token });
  if (readyz.status !== 200) return `/readyz ${readyz.status} ${readyz.body.slice(0, 300)}`;
  const ns = await apiserverGet(server, '/api/v1/namespaces/default', { caPem, token });
  return ns.status === 200 ? true : `namespace default: ${ns.status}`;
}

/**
 * kube-controller-manager's and kube-scheduler's /healthz on their own serving port. They serve a self-signed
 * certificate made at start, so there is no CA to verify against: the port is loopback and ours.
 */
export async function componentHealthy(port: number): Promise<true | string> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/healthz', method: 'GET', rejectUnauthorized: false, timeout: 3_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () =>
          resolve(res.statusCode === 200 ? true : `/healthz ${res.statusCode ?? 0} ${body.slice(0, 200)}`),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve(err.message));
    req.end();
  });
}

/** True once every Node named is Ready (kwok writes the condition a kubelet would). */
export async function nodesReady(
  server: string,
  caPem: string,
  token: string,
  names: readonly string[],
): Promise<true | string> {
  const r = await apiserverGet(server, '/api/v1/nodes', { caPem, token });
  if (r.status !== 200) return `GET nodes: ${r.status}`;
  const items = (
    JSON.parse(r.body) as {
      items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[];
    }
  ).items;
  const notReady = names.filter(
    (n) =>
      items
        .find((i) => i.metadata.name === n)
        ?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') !== true,
  );
  return notReady.length === 0 ? true : `not Ready yet: ${notReady.join(', ')}`;
}

/** The last lines of a component's log, for the error that says it did not start (empty when it wrote none). */
export async function logTail(logFile: string, lines = 15): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  const last = text.trimEnd().split('\n').slice(-lines);
  return last.length > 0 && last[0] !== '' ? `\n  last lines of the log:\n    ${last.join('\n    ')}` : '';
}
