/**
 * A deployed model whose replicas all fail keeps its traffic share (issue 34): its calls get 503
 * UNAVAILABLE naming it, the other model keeps exactly its own share, the model and its endpoint report
 * it, and once replicas are back its calls are answered again. Two containerSpec models split 50/50;
 * the spot model's only Node (a kwok Node of the test's own in GKE's spot pool) is lost the way an
 * administrator marks a node that shut down (the `node.kubernetes.io/out-of-service` NoExecute taint):
 * the cluster evicts the replica and cannot place a new one. Nothing here writes any object's status.
 */
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { readyOf } from '../reconcilers/harness.js';
import {
  apply,
  CapturedLog,
  eventually,
  getJson,
  setUpNamespace,
  startGateway,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';
import { VertexContainerServer } from './vertex-container-server.js';
import { callStream, podsOf, predict, spotNodeManifest, standInForReadyPods, type Call } from './simulated-replicas.js';

const SPOT = { name: 'spot-scorer', id: '8101' };
const STEADY = { name: 'steady-scorer', id: '8102' };
const SPLIT = { [SPOT.id]: 50, [STEADY.id]: 50 };
const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';

function model(m: { name: string; id: string }, spot: boolean): Record<string, unknown> {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'DeployedModel',
    metadata: { name: m.name },
    spec: {
      endpointRef: { name: 'scoring' },
      id: m.id,
      model: `projects/demo-project/locations/europe-west4/models/${m.name}@1`,
      containerSpec: { imageUri: `registry.example/${m.name}:1`, predictRoute: '/predict', healthRoute: '/health' },
      dedicatedResources: {
        machineSpec: { machineType: 'n1-standard-2' },
        minReplicaCount: 1,
        ...(spot ? { spot: true } : {}),
      },
    },
  };
}

async function run(args: string[], timeoutMs = 90_000): Promise<void> {
  const r = await kubectl(args, { timeoutMs });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr}${r.stdout}`);
}

/** What a call routed to the spot model gets while it has no replica. */
function unavailableSpot(call: Call): boolean {
  return (
    call.status === 503 &&
    call.error?.status === 'UNAVAILABLE' &&
    call.error.message?.startsWith(`Deployed model ${SPOT.id} (${SPOT.name})`) === true
  );
}

/** An answer from the model the split chose, by its own server (no call answered by another model's server). */
function answered(call: Call, m: { name: string; id: string }): boolean {
  return call.status === 200 && call.id === m.id && call.servedBy === m.name;
}

let env: GatewayEnv;
let ns = '';
let node = '';
let gateway: GatewayServer;
let url = '';
// Each says which model it is, so a call's answer shows where it went.
const servers = {
  spot: new VertexContainerServer(() => ({ servedBy: SPOT.name })),
  steady: new VertexContainerServer(() => ({ servedBy: STEADY.name })),
};
const ports = { spot: 0, steady: 0 };

beforeAll(async () => {
  ns = await createTestNamespace('replicas-fail');
  node = `spot-${ns}`;
  env = await setUpNamespace(ns);
  ports.spot = await servers.spot.start();
  ports.steady = await servers.steady.start();
  let base = '';
  ({ gateway, url: base } = await startGateway(env, new CapturedLog().logger));
  await apply('default', spotNodeManifest(node));
  await run(['wait', '--for=condition=Ready', `node/${node}`, '--timeout=60s']);
  await apply(
    ns,
    [
      {
        apiVersion: 'prediction.endpoint-operator.dev/v1',
        kind: 'PredictionEndpoint',
        metadata: { name: 'scoring' },
        spec: { displayName: 'Scoring', trafficSplit: SPLIT },
      },
      model(SPOT, true),
      model(STEADY, false),
    ]
      .map((d) => yaml.dump(d))
      .join('---\n'),
  );
  url = `${base}/v1/${await waitDeployed(ns, 'scoring', [SPOT.id, STEADY.id])}:predict`;
  await run([
    'wait',
    '-n',
    ns,
    '--for=condition=Available',
    '--timeout=60s',
    'deployment/dm-spot-scorer',
    'deployment/dm-steady-scorer',
  ]);
  expect((await podsOf(ns, SPOT.name)).map((p) => p.spec.nodeName)).toEqual([node]);
  await standInForReadyPods(ns, SPOT.name, ports.spot);
  await standInForReadyPods(ns, STEADY.name, ports.steady);
  await run([
    'wait',
    '-n',
    ns,
    '--for=condition=Ready',
    '--timeout=60s',
    'predictionendpoint/scoring',
    'deployedmodel/spot-scorer',
    'deployedmodel/steady-scorer',
  ]);
}, 240_000);

afterAll(async () => {
  await gateway?.close();
  await servers.spot.close();
  await servers.steady.close();
  await env?.operator.stop();
  if (ns === '') return;
  // Namespaces are never deleted in this cluster: free the Nodes of the replicas, then remove the test's own Node.
  await kubectl(['delete', '-n', ns, 'deployments', '--all', '--wait=true', '--timeout=60s']);
  await kubectl(['delete', 'node', node, '--ignore-not-found', '--wait=false']);
});

describe('a deployed model whose replicas all fail', () => {
  it('serves both models while they have replicas, each exactly its share', async () => {
    // Until the gateway's caches hold the stand-ins' slices; a call sent first to a simulated pod's own
    // (unreachable) address is retried on a stand-in.
    await eventually(
      'both models answering',
      async () => {
        const calls = await Promise.all([1, 2].map(() => predict(url)));
        return calls.every((c) => c.status === 200);
      },
      30_000,
    );
    const calls: Call[] = [];
    for (let i = 0; i < 40; i++) calls.push(await predict(url));
    expect(calls.filter((c) => answered(c, SPOT)).length, JSON.stringify(calls.filter((c) => c.status !== 200))).toBe(
      20,
    );
    expect(calls.filter((c) => answered(c, STEADY)).length).toBe(20);
  });

  it('keeps its share when its Node is lost: its calls get 503 UNAVAILABLE naming it, the other model keeps its own share, and both it and the endpoint say so', async () => {
    const stream = callStream(url);
    let firstFailure = -1;
    try {
      await eventually('calls flowing', () => stream.calls.length >= 20, 30_000);
      await run(['taint', 'nodes', node, `${OUT_OF_SERVICE}=nodeshutdown:NoExecute`]);

      // The model: its replica evicted, the new one unschedulable (only the lost Node is in the spot pool).
      await run(['wait', '-n', ns, '--for=condition=Stalled', '--timeout=90s', `deployedmodel/${SPOT.name}`]);
      const dm = await getJson(ns, `deployedmodel/${SPOT.name}`);
      expect(readyOf(dm)).toMatchObject({ status: 'False', reason: 'Unschedulable' });
      expect(readyOf(dm)?.message).toContain(
        `deployed to PredictionEndpoint "scoring" with id ${SPOT.id}, not serving yet: 0 of 1 required replica(s) available`,
      );
      expect(readyOf(dm)?.message).toMatch(
        /cannot be scheduled: 0\/\d+ nodes are available: 1 node\(s\) had untolerated taint/,
      );
      expect(dm.status).toMatchObject({ availableReplicaCount: 0 });

      // The endpoint: not Ready, naming the model and the share it keeps; the split in effect is unchanged.
      await run(['wait', '-n', ns, '--for=condition=Ready=false', '--timeout=60s', 'predictionendpoint/scoring']);
      const ep = await eventually('the endpoint reports the model', async () => {
        const obj = await getJson(ns, 'predictionendpoint/scoring');
        return readyOf(obj)?.reason === 'DeployedModelUnavailable' ? obj : undefined;
      });
      expect(readyOf(ep)?.message).toContain(
        `status.trafficSplit[${SPOT.id}]: 50% of calls go to DeployedModel "${SPOT.name}" (id ${SPOT.id}), which is not Ready (Unschedulable)`,
      );
      expect(readyOf(ep)?.message).not.toContain(STEADY.name);
      expect(ep.status?.trafficSplit).toEqual(SPLIT);
      expect(ep.status?.deployedModels).toEqual([
        expect.objectContaining({ id: SPOT.id, deployedModelRef: SPOT.name, ready: 'False', reason: 'Unschedulable' }),
        expect.objectContaining({ id: STEADY.id, deployedModelRef: STEADY.name, ready: 'True', reason: 'Reconciled' }),
      ]);

      // The gateway: from the first 503 on, a steady stretch of calls.
      firstFailure = await eventually(
        'a call refused',
        () => {
          const i = stream.calls.findIndex((c) => c.status !== 200);
          return i >= 0 ? i : undefined;
        },
        60_000,
      );
      await eventually('calls during the outage', () => stream.calls.length >= firstFailure + 60, 60_000);
    } finally {
      await stream.stop();
    }
    const calls = stream.calls;
    // Every call answered by the model the split chose, or refused as the spot model's: nothing else failed.
    const unexpected = calls.filter((c) => !answered(c, SPOT) && !answered(c, STEADY) && !unavailableSpot(c));
    expect(unexpected).toEqual([]);
    const outage = calls.slice(firstFailure);
    const refused = outage.filter(unavailableSpot);
    const steady = outage.filter((c) => answered(c, STEADY));
    // Not one call moved: the spot model's half is refused, the steady model answers its half and no more.
    expect(outage.filter((c) => answered(c, SPOT))).toEqual([]);
    expect(refused.length + steady.length).toBe(outage.length);
    expect(Math.abs(refused.length - steady.length)).toBeLessThanOrEqual(1);
    expect(refused.at(-1)?.error?.message).toBe(
      `Deployed model ${SPOT.id} (${SPOT.name}) is unavailable: Service ${ns}/dm-${SPOT.name} has no ready endpoint on port http.`,
    );
  }, 240_000);

  it('answers its calls again once its Node is back in service', async () => {
    const before = servers.spot.received.length;
    await run(['taint', 'nodes', node, `${OUT_OF_SERVICE}-`]);
    await run(['wait', '-n', ns, '--for=condition=Available', '--timeout=90s', `deployment/dm-${SPOT.name}`]);
    const pods = await standInForReadyPods(ns, SPOT.name, ports.spot);
    expect(pods).toHaveLength(1);
    await run([
      'wait',
      '-n',
      ns,
      '--for=condition=Ready',
      '--timeout=60s',
      `deployedmodel/${SPOT.name}`,
      'predictionendpoint/scoring',
    ]);
    await eventually('the spot model answering', async () => answered(await predict(url), SPOT), 30_000);

    const calls: Call[] = [];
    for (let i = 0; i < 40; i++) calls.push(await predict(url));
    expect(calls.filter((c) => answered(c, SPOT)).length, JSON.stringify(calls.filter((c) => c.status !== 200))).toBe(
      20,
    );
    expect(calls.filter((c) => answered(c, STEADY)).length).toBe(20);
    expect(servers.spot.received.length).toBeGreaterThan(before);
    const ep = await getJson(ns, 'predictionendpoint/scoring');
    expect(ep.status?.trafficSplit).toEqual(SPLIT);
    expect(readyOf(ep)).toMatchObject({ status: 'True', reason: 'Reconciled' });
  }, 240_000);
});
