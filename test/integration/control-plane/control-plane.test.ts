/**
 * Proves the control plane under the integration tests is a real Kubernetes API: CRDs get Established,
 * objects are stored and watched, the status subresource behaves as in Kubernetes, and the apiserver's
 * structural-schema validation refuses bad objects.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELEASES } from '../../../dev/cluster/binaries.js';
import { createTestNamespace, kubectl, testCluster } from '../../support/cluster.js';

const GROUP = 'cp-test.endpoint-operator.dev';

// Plain YAML on purpose: this test checks the apiserver, not the project's CRD generator.
const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${GROUP}
spec:
  group: ${GROUP}
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: { type: integer, minimum: 1, maximum: 10 }
                color: { type: string, enum: [red, green] }
            status:
              type: object
              properties:
                phase: { type: string }
`;

function widget(ns: string, name: string, size: number, color = 'red'): string {
  return `apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  size: ${size}\n  color: ${color}\n`;
}

interface WatchEvent {
  readonly type: string;
  readonly name: string;
  readonly generation: number;
  readonly size: unknown;
  readonly phase: unknown;
}

describe('local control plane', () => {
  let ns: string;
  const events: WatchEvent[] = [];
  let stopWatch: AbortController | undefined;
  let watchError: unknown;

  beforeAll(async () => {
    const created = await kubectl(['create', '-f', '-'], { input: CRD });
    expect(created.code, created.stderr).toBe(0);
    const established = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/widgets.${GROUP}`]);
    expect(established.code, established.stderr).toBe(0);
    ns = await createTestNamespace('control-plane');

    const kc = new KubeConfig();
    kc.loadFromFile(testCluster().kubeconfig);
    stopWatch = await new Watch(kc).watch(
      `/apis/${GROUP}/v1/namespaces/${ns}/widgets`,
      {},
      (
        type,
        obj: {
          metadata?: { name?: string; generation?: number };
          spec?: { size?: unknown };
          status?: { phase?: unknown };
        },
      ) => {
        events.push({
          type,
          name: obj.metadata?.name ?? '',
          generation: obj.metadata?.generation ?? 0,
          size: obj.spec?.size,
          phase: obj.status?.phase,
        });
      },
      (err) => {
        if (err !== null && err !== undefined) watchError = err;
      },
    );
  });

  afterAll(async () => {
    stopWatch?.abort();
    // Cluster-scoped, so remove it; namespaced objects go with the run's etcd.
    await kubectl(['delete', 'crd', `widgets.${GROUP}`, '--wait=false']);
  });

  async function eventually(predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (watchError !== undefined) throw new Error(`watch failed: ${String(watchError)}`);
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; events so far: ${JSON.stringify(events)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('serves a real apiserver of the expected version over TLS verified by its CA', async () => {
    const version = await kubectl(['version', '-o', 'json']);
    expect(version.code, version.stderr).toBe(0);
    const server = (JSON.parse(version.stdout) as { serverVersion?: { gitVersion?: string } }).serverVersion;
    expect(server?.gitVersion).toBe(testCluster().version);
    expect(RELEASES.map((r) => r.version)).toContain(server?.gitVersion);
    expect(testCluster().server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('stores an object applied with kubectl and delivers it to a watch', async () => {
    const applied = await kubectl(['apply', '-f', '-'], { input: widget(ns, 'first', 3) });
    expect(applied.code, applied.stderr).toBe(0);
    await eventually(() => events.some((e) => e.type === 'ADDED' && e.name === 'first'), 'ADDED first');
    expect(events.find((e) => e.name === 'first')).toMatchObject({ generation: 1, size: 3 });
  });

  it('updates status through the status subresource without bumping generation or touching spec', async () => {
    const patched = await kubectl([
      'patch',
      '-n',
      ns,
      `widgets.${GROUP}`,
      'first',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { phase: 'Ready' }, spec: { size: 9 } }),
    ]);
    expect(patched.code, patched.stderr).toBe(0);
    await eventually(
      () => events.some((e) => e.type === 'MODIFIED' && e.phase === 'Ready'),
      'MODIFIED with status.phase=Ready',
    );
    const modified = events.find((e) => e.type === 'MODIFIED' && e.phase === 'Ready');
    // The /status endpoint ignores spec changes, and status changes do not increase metadata.generation.
    expect(modified).toMatchObject({ generation: 1, size: 3 });

    // And the main resource ignores status: a spec change bumps generation and keeps the status.
    const applied = await kubectl(['apply', '-f', '-'], { input: widget(ns, 'first', 4) });
    expect(applied.code, applied.stderr).toBe(0);
    await eventually(() => events.some((e) => e.type === 'MODIFIED' && e.size === 4), 'MODIFIED with spec.size=4');
    expect(events.find((e) => e.size === 4)).toMatchObject({ generation: 2, phase: 'Ready' });
  });

  it('refuses objects that break the CRD schema, naming the field', async () => {
    const tooBig = await kubectl(['apply', '-f', '-'], { input: widget(ns, 'too-big', 11) });
    expect(tooBig.code).not.toBe(0);
    expect(tooBig.stderr).toMatch(/spec\.size/);
    expect(tooBig.stderr).toMatch(/less than or equal to 10/);

    const badColor = await kubectl(['apply', '-f', '-'], { input: widget(ns, 'bad-color', 2, 'blue') });
    expect(badColor.code).not.toBe(0);
    expect(badColor.stderr).toMatch(/spec\.color/);
    expect(badColor.stderr).toMatch(/Unsupported value: "blue"/);

    const missing = await kubectl(['get', '-n', ns, `widgets.${GROUP}`, 'too-big']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/NotFound|not found/);
  });

  it('authenticates: an unknown bearer token is rejected', async () => {
    const denied = await kubectl(['--token', 'not-a-valid-token', 'get', 'ns']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/Unauthorized|must be logged in/);
  });

  it('answers a watch from a resourceVersion older than an etcd compaction with 410 Gone', async () => {
    const { etcdEndpoint } = testCluster();
    const created = await kubectl([
      'create',
      'configmap',
      'compacted',
      '-n',
      ns,
      '--from-literal=v=0',
      '-o',
      'jsonpath={.metadata.resourceVersion}',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const oldVersion = created.stdout.trim();
    for (const v of [1, 2]) {
      const patched = await kubectl([
        'patch',
        'configmap',
        'compacted',
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ data: { v: String(v) } }),
      ]);
      expect(patched.code, patched.stderr).toBe(0);
    }
    // etcd's v3 JSON gateway: read the current revision, then compact everything before it.
    const range = await fetch(`${etcdEndpoint}/v3/kv/range`, {
      method: 'POST',
      body: JSON.stringify({ key: Buffer.from('/').toString('base64') }),
    });
    const revision = ((await range.json()) as { header: { revision: string } }).header.revision;
    const compacted = await fetch(`${etcdEndpoint}/v3/kv/compaction`, {
      method: 'POST',
      body: JSON.stringify({ revision, physical: true }),
    });
    expect(compacted.status).toBe(200);

    const first = await firstWatchEvent(`/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${oldVersion}`);
    expect(first).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });
});

/** Opens a raw watch on the test apiserver and returns its first event. */
function firstWatchEvent(path: string): Promise<unknown> {
  const { server, token, caFile } = testCluster();
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, server),
      { headers: { Authorization: `Bearer ${token}` }, ca: readFileSync(caFile), timeout: 15_000 },
      (res) => {
        let buffered = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          buffered += chunk;
          const newline = buffered.indexOf('\n');
          if (newline >= 0) {
            resolve(JSON.parse(buffered.slice(0, newline)) as unknown);
            req.destroy();
          }
        });
        res.on('end', () =>
          reject(new Error(`watch ended without an event (HTTP ${res.statusCode ?? 0}): ${buffered}`)),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('watch timed out')));
    req.on('error', reject);
    req.end();
  });
}
