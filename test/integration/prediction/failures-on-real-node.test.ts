/**
 * What real pods do wrong, under steady load (10 REST + 10 gRPC calls a second through the gateway) to an
 * endpoint whose one containerSpec model has 3 replicas on the real node (kubelet + containerd): a deleted pod, a
 * model server SIGKILLed through the node's runtime (not a pod delete), a scale-down 3 → 1, a new version (a new
 * image: a new DeployedModel and a split change, as containerSpec is immutable), and a container over its memory
 * limit. Each case states what may fail and counts it; the figures are printed (docs/benchmarks.md keeps them).
 *
 * The model server is busybox's httpd with a CGI script (a few hundred kB, no Python): each call is its own
 * connection, so a kill finds calls in flight and the next ones find the port closed.
 */
import { credentials as grpcCredentials } from '@grpc/grpc-js';
import { v1 as aiplatform } from '@google-cloud/aiplatform';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MachineCatalogue } from '../../../src/api/prediction/v1/machine-catalogue.js';
import { capture } from '../../../dev/host/exec.js';
import { ON_REAL_NODE, REGISTRY_HOST } from '../../../dev/cluster/real-node/node-config.js';
import { ensureNodeBinaries } from '../../../dev/cluster/real-node/node-binaries.js';
import { buildAndPush } from '../../../dev/cluster/real-node/node-images.js';
import { gatewayEjections, gatewayUpstreamResets, gatewayUpstreamRetries } from '../../../src/gateway/metrics.js';
import { MODEL_UID_LABEL } from '../../../src/reconcilers/serving/serving-plan.js';
import { metricValue } from '../../support/metric-value.js';
import { kstatus } from '../../support/kstatus.js';
import { REAL_NODE_CATALOGUE, REAL_NODE_MACHINE_TYPE } from '../../support/real-node.js';
import { endpoint, manifests, startRealNodeGateway, until, type RealNodeGateway } from './real-node-serving.js';

/** A machine type whose memory limit a model server outgrows at once. */
const SMALL_MACHINE = 'e2-micro';
const SMALL_MEMORY = '32Mi';
const CATALOGUE: MachineCatalogue = {
  ...REAL_NODE_CATALOGUE,
  machineTypes: {
    ...REAL_NODE_CATALOGUE.machineTypes,
    [SMALL_MACHINE]: {
      cpu: '50m',
      memory: SMALL_MEMORY,
      nodeSelector: { ...ON_REAL_NODE.nodeSelector },
      tolerations: ON_REAL_NODE.tolerations.map((t) => ({ ...t })),
    },
  },
};

const image = (version: number): string => `${REGISTRY_HOST}/endpoint-operator/busybox-model:${version}`;
/** Vertex's custom-container protocol: the body posted as is, `predictions` answered; the image's version in each. */
const PREDICT = `#!/bin/busybox sh
/bin/busybox head -c "\${CONTENT_LENGTH:-0}" >/dev/null
printf 'Content-Type: application/json\\r\\n\\r\\n{"predictions":["%s"]}' "$(/bin/busybox cat /version)"
`;
/** httpd under a shell that exits on SIGTERM (httpd as PID 1 would ignore it until the grace period ends). */
const containerfile = `FROM scratch
COPY busybox /bin/busybox
COPY version /version
COPY index.html /www/index.html
COPY --chmod=755 predict /www/cgi-bin/predict
ENTRYPOINT ["/bin/busybox", "sh", "-c", "trap 'exit 0' TERM; /bin/busybox httpd -f -p 8080 -h /www & wait"]
`;
const ROUTES = { predictRoute: '/cgi-bin/predict', healthRoute: '/index.html' };

let s: RealNodeGateway;
let ctr: string;

beforeAll(async () => {
  s = await startRealNodeGateway('failures', 'failures', CATALOGUE);
  const logFile = join(s.plane.dataDir, 'logs', 'busybox-model.log');
  for (const version of [1, 2])
    await buildAndPush(
      image(version),
      containerfile,
      { version: `v${version}\n`, 'index.html': 'ok\n', predict: PREDICT },
      logFile,
    );
  ctr = (await ensureNodeBinaries()).ctr;
  process.env['METADATA_SERVER_DETECTION'] = 'none';
}, 1_800_000);

afterAll(async () => {
  await s?.stop();
});

interface Obj {
  metadata: { name?: string; uid?: string; generation?: number };
  spec?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- read field by field
  status?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- read field by field
}

async function get(resource: string): Promise<Obj> {
  const r = await s.k(['get', resource, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl get ${resource}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Obj;
}

async function apply(...objects: object[]): Promise<void> {
  const r = await s.k(['apply', '-f', '-'], manifests(...objects));
  expect(r.code, r.stderr).toBe(0);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function model(name: string, id: string, version: number, replicas: number, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'DeployedModel',
    metadata: { name },
    spec: {
      endpointRef: { name: 'steady' },
      id,
      model: `projects/demo-project/locations/europe-west4/models/${name}@1`,
      dedicatedResources: {
        machineSpec: { machineType: REAL_NODE_MACHINE_TYPE },
        minReplicaCount: replicas,
        maxReplicaCount: replicas,
      },
      containerSpec: { imageUri: image(version), ...ROUTES },
      ...extra,
    },
  };
}

async function podsOf(name: string): Promise<Obj[]> {
  const uid = (await get(`deployedmodel/${name}`)).metadata.uid ?? '';
  const r = await s.k(['get', 'pods', '-l', `${MODEL_UID_LABEL}=${uid}`, '-o', 'json']);
  return (JSON.parse(r.stdout) as { items: Obj[] }).items;
}

const isReady = (p: Obj): boolean =>
  p.metadata.name !== undefined &&
  p.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') ===
    true;

/** The model's pods once `n` are Ready and none is terminating. */
function readyPods(name: string, n: number): Promise<Obj[]> {
  return until(`${n} ready pods of ${name}, none terminating`, async () => {
    const pods = await podsOf(name);
    return pods.length === n && pods.every(isReady) ? pods : undefined;
  });
}

interface Sample {
  readonly transport: 'rest' | 'grpc';
  readonly start: number;
  end: number;
  ok: boolean;
  answer: string;
}

/** 10 REST and 10 gRPC calls a second, each on its own (a slow answer delays no other call), until stop(). */
function steadyLoad(name: string): { samples: Sample[]; stop(): Promise<Sample[]> } {
  const samples: Sample[] = [];
  const pending: Promise<void>[] = [];
  const grpc = new aiplatform.PredictionServiceClient({
    apiEndpoint: '127.0.0.1',
    port: s.gatewayPort,
    sslCreds: grpcCredentials.createSsl(Buffer.from(s.tls.ca)),
    authClient: { getRequestHeaders: async () => new Headers() } as never,
  });
  const track = (transport: Sample['transport'], call: () => Promise<string>): void => {
    const sample: Sample = { transport, start: Date.now(), end: 0, ok: false, answer: '' };
    samples.push(sample);
    pending.push(
      call().then(
        (answer) => Object.assign(sample, { end: Date.now(), ok: true, answer }),
        (err: unknown) => void Object.assign(sample, { end: Date.now(), answer: String(err).slice(0, 300) }),
      ) as Promise<void>,
    );
  };
  const timer = setInterval(() => {
    track('rest', async () => {
      const res = await request(`${s.gatewayUrl}/v1/${name}:predict`, {
        method: 'POST',
        dispatcher: s.agent,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ instances: [[1]] }),
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${text}`);
      return String((JSON.parse(text) as { predictions: string[] }).predictions[0]);
    });
    track('grpc', async () => {
      const [answer] = await grpc.predict(
        { endpoint: name, instances: [{ listValue: { values: [{ numberValue: 1 }] } }] },
        { timeout: 10_000 },
      );
      return String(answer.predictions?.[0]?.stringValue);
    });
  }, 100);
  return {
    samples,
    stop: async () => {
      clearInterval(timer);
      await Promise.all(pending);
      await grpc.close();
      return samples;
    },
  };
}

const figures: string[] = [];

/** Prints and keeps one case's figures. */
function report(what: string, samples: readonly Sample[], detail: string): void {
  const failed = samples.filter((x) => !x.ok);
  const by = (t: Sample['transport']): string =>
    `${samples.filter((x) => x.transport === t).length} ${t} (${failed.filter((x) => x.transport === t).length} failed)`;
  const line = `${what}: ${samples.length} calls, ${failed.length} failed: ${by('rest')}, ${by('grpc')}; ${detail}`;
  figures.push(line);
  console.error(`[failures on the real node] ${line}`);
  for (const f of failed.slice(0, 5)) console.error(`  failed ${f.transport} at ${f.start}: ${f.answer}`);
}

describe('real pods failing under 20 calls a second', () => {
  let name = '';

  afterAll(() => {
    console.error(`[failures on the real node] figures:\n  ${figures.join('\n  ')}`);
  });

  beforeAll(async () => {
    await apply(endpoint('steady', { '1': 100 }), model('v1', '1', 1, 3));
    name = await until('status.name', async () => (await get('predictionendpoint/steady')).status?.name as string);
    await readyPods('v1', 3);
    await until('an answer', async () => {
      const r = await request(`${s.gatewayUrl}/v1/${name}:predict`, {
        method: 'POST',
        dispatcher: s.agent,
        headers: { 'content-type': 'application/json' },
        body: '{"instances":[[1]]}',
      });
      const text = await r.body.text();
      return r.statusCode === 200 ? text : undefined;
    });
  }, 600_000);

  it('a deleted pod: its replacement serves, 0 calls fail', async () => {
    const [victim] = await readyPods('v1', 3);
    const load = steadyLoad(name);
    await sleep(2_000);
    const at = Date.now();
    const deleted = await s.k(['delete', 'pod', victim?.metadata.name ?? '', '--wait=false']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const pods = await until('a replacement Ready and the old pod gone', async () => {
      const now = await podsOf('v1');
      return now.length === 3 && now.every(isReady) && !now.some((p) => p.metadata.name === victim?.metadata.name)
        ? now
        : undefined;
    });
    const recovered = Date.now() - at;
    await sleep(2_000);
    const samples = await load.stop();
    report('deleted pod', samples, `3 replicas again ${(recovered / 1000).toFixed(1)} s after the delete`);
    expect(pods).toHaveLength(3);
    expect(samples.length).toBeGreaterThan(100);
    expect(samples.filter((x) => !x.ok)).toEqual([]);
  }, 300_000);

  it('a model server SIGKILLed through containerd: only calls in flight may fail, none from 1 s after the kill', async () => {
    const [victim] = await readyPods('v1', 3);
    const containerId = String(victim?.status?.containerStatuses?.[0]?.containerID ?? '').replace(
      /^containerd:\/\//,
      '',
    );
    expect(containerId).toMatch(/^[0-9a-f]{64}$/);
    const restarts = Number(victim?.status?.containerStatuses?.[0]?.restartCount ?? 0);
    const socket = s.plane.realNode?.containerdSocket ?? '';
    const before = {
      ejections: await metricValue(gatewayEjections),
      retries: await metricValue(gatewayUpstreamRetries),
      resets: await metricValue(gatewayUpstreamResets),
    };
    const load = steadyLoad(name);
    await sleep(2_000);
    const at = Date.now();
    const killed = await capture(ctr, [
      '--address',
      socket,
      '-n',
      'k8s.io',
      'tasks',
      'kill',
      '-s',
      'SIGKILL',
      containerId,
    ]);
    expect(killed.code, killed.stderr).toBe(0);
    const killDone = Date.now();
    await until('the container restarted and Ready', async () => {
      const pod = (await podsOf('v1')).find((p) => p.metadata.name === victim?.metadata.name);
      const status = pod?.status?.containerStatuses?.[0];
      return pod !== undefined && isReady(pod) && Number(status?.restartCount) > restarts ? pod : undefined;
    });
    const recovered = Date.now() - at;
    await sleep(2_000);
    const samples = await load.stop();
    const failed = samples.filter((x) => !x.ok);
    const ejections = (await metricValue(gatewayEjections)) - before.ejections;
    const retries = (await metricValue(gatewayUpstreamRetries)) - before.retries;
    const resets = (await metricValue(gatewayUpstreamResets)) - before.resets;
    report(
      'SIGKILL of one server',
      samples,
      `${failed.filter((x) => x.start < at).length} of the failures sent before the kill; the gateway retried ${retries} refused calls on another replica, answered ${resets} reset after sending with 503, ejected the endpoint ${ejections} time(s); the container restarted and Ready ${(recovered / 1000).toFixed(1)} s after it (ctr took ${killDone - at} ms)`,
    );
    // The kill was felt: the killed server's port refused (or reset) calls, and the gateway ejected it.
    expect(ejections).toBeGreaterThan(0);
    expect(samples.filter((x) => x.start >= killDone + 1_000 && !x.ok)).toEqual([]);
    // Only calls that were in flight when the kill landed: sent before it returned.
    expect(failed.every((x) => x.start < killDone)).toBe(true);
  }, 300_000);

  it('a scale-down from 3 replicas to 1: 0 calls fail', async () => {
    await readyPods('v1', 3);
    const load = steadyLoad(name);
    await sleep(2_000);
    const at = Date.now();
    await apply(model('v1', '1', 1, 1));
    await readyPods('v1', 1);
    const done = Date.now() - at;
    await sleep(2_000);
    const samples = await load.stop();
    report('scale-down 3 → 1', samples, `one pod left ${(done / 1000).toFixed(1)} s after the apply`);
    expect(samples.filter((x) => !x.ok)).toEqual([]);
  }, 300_000);

  it('a new image: a new DeployedModel and a split change, the old one deleted; 0 calls fail', async () => {
    await apply(model('v1', '1', 1, 2));
    await readyPods('v1', 2);
    const load = steadyLoad(name);
    await sleep(2_000);
    const at = Date.now();
    // containerSpec is immutable (a new version is a new DeployedModel, as in Vertex): v2 is applied with the split
    // that moves all traffic to it; the split takes effect once v2 is Ready.
    await apply(endpoint('steady', { '2': 100 }), model('v2', '2', 2, 2));
    await until('v2 answering every call', async () => {
      const last = load.samples.filter((x) => x.end > 0).slice(-20);
      return last.length === 20 && last.every((x) => x.answer === 'v2') ? true : undefined;
    });
    const switched = Date.now() - at;
    const deleted = await s.k(['delete', 'deployedmodel', 'v1', '--wait=true', '--timeout=120s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    await until('v1 pods gone', async () => {
      const r = await s.k(['get', 'pods', '-o', 'name']);
      return r.stdout
        .trim()
        .split('\n')
        .filter((l) => l !== '').length === 2
        ? true
        : undefined;
    });
    await sleep(2_000);
    const samples = await load.stop();
    const answers = (v: string): number => samples.filter((x) => x.answer === v).length;
    report(
      'new image (v1 → v2)',
      samples,
      `${answers('v1')} answered by v1, ${answers('v2')} by v2; every call on v2 ${(switched / 1000).toFixed(1)} s after the apply`,
    );
    expect(samples.filter((x) => !x.ok)).toEqual([]);
    expect(answers('v1')).toBeGreaterThan(0);
    expect(answers('v2')).toBeGreaterThan(0);
  }, 600_000);

  it("a server over its memory limit is OOMKilled, named with the limit; a crashing one's last lines reach its condition", async () => {
    /** A model of endpoint `failing` (no traffic) whose container runs `script` in busybox's shell. */
    const failing = (dm: string, id: string, machineType: string, script: string): object => {
      const base = model(dm, id, 1, 1);
      return {
        ...base,
        spec: {
          ...base.spec,
          endpointRef: { name: 'failing' },
          dedicatedResources: { machineSpec: { machineType }, minReplicaCount: 1, maxReplicaCount: 1 },
          containerSpec: { imageUri: image(1), ...ROUTES, command: ['/bin/busybox', 'sh', '-c', script] },
        },
      };
    };
    const applied = Date.now();
    await apply(
      endpoint('failing', {}),
      // 50 MB held in the shell's memory, over the 32 MiB limit.
      failing(
        'hungry',
        '31',
        SMALL_MACHINE,
        'x=$(/bin/busybox head -c 50000000 /dev/zero | /bin/busybox tr "\\000" a); /bin/busybox sleep 3600',
      ),
      failing(
        'crashing',
        '32',
        REAL_NODE_MACHINE_TYPE,
        // Both lines on one stream: the runtime copies stdout and stderr to the log separately, so lines of the two
        // may be logged in either order.
        'echo loading the model >&2; echo "fatal: no model at /models/x" >&2; exit 3',
      ),
    );
    const cases = [
      ['hungry', 'OOMKilled', new RegExp(`killed for exceeding its memory limit of ${SMALL_MEMORY} \\(OOMKilled`)],
      ['crashing', 'CrashLoopBackOff', /last exit code 3 \(Error\): loading the model\nfatal: no model at \/models\/x/],
    ] as const;
    for (const [dm, reason, message] of cases) {
      const seen = await until(`${dm}: ${reason}`, async () => {
        const obj = await get(`deployedmodel/${dm}`);
        const ready = (obj.status?.conditions as { type: string; reason?: string }[] | undefined)?.find(
          (c) => c.type === 'Ready',
        );
        return ready?.reason === reason ? obj : undefined;
      });
      const conditions = seen.status?.conditions as {
        type: string;
        status: string;
        reason?: string;
        message?: string;
      }[];
      const ready = conditions.find((c) => c.type === 'Ready');
      expect(ready?.message).toMatch(message);
      expect(conditions.find((c) => c.type === 'Stalled')).toMatchObject({ status: 'True', reason });
      expect(await kstatus(seen as Parameters<typeof kstatus>[0])).toMatchObject({ status: 'Failed' });
      const line = `${dm}: ${reason} ${((Date.now() - applied) / 1000).toFixed(1)} s after the apply: ${ready?.message ?? ''}`;
      figures.push(line);
      console.error(`[failures on the real node] ${line}`);
    }
    const cleared = await s.k(['delete', 'deployedmodel', 'hungry', 'crashing', '--wait=false']);
    expect(cleared.code, cleared.stderr).toBe(0);
  }, 300_000);
});
