import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import {
  apply,
  eventually,
  exampleBackendsIn,
  examplesIn,
  getJson,
  readyOf,
  runOperatorWithCrds,
  waitReady,
  type TestOperator,
} from './harness.js';

describe('prediction reconcilers on a real apiserver', () => {
  let ns: string;
  let op: TestOperator;

  beforeAll(async () => {
    ns = await createTestNamespace('reconcile-prediction');
    op = await runOperatorWithCrds(ns);
  });

  afterAll(async () => {
    await op?.stop();
  });

  it('converges the valid examples to Ready', async () => {
    await apply(ns, examplesIn('prediction', ns));
    await apply(ns, await exampleBackendsIn('prediction', ns));
    await waitReady(ns, 'predictionendpoints,deployedmodels --all');
    const ep = await getJson(ns, 'predictionendpoint/fraud-scoring');
    expect(ep.status?.name).toBe(`projects/${ns}/locations/europe-west4/endpoints/fraud-scoring`);
    expect((ep.status?.deployedModels as Array<{ id: string }>).map((d) => d.id)).toEqual(['4712380917', '8815520493']);
    expect(readyOf(ep)).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
      observedGeneration: ep.metadata.generation,
    });
    expect(ep.metadata.finalizers).toContain('prediction.endpoint-operator.dev/finalizer');
  });

  it('resolves a model applied before its endpoint, assigning an id', async () => {
    await apply(
      ns,
      `
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: early-model }
spec:
  endpointRef: { name: late-endpoint }
  model: projects/p/locations/l/models/m
  automaticResources: { minReplicaCount: 1 }
`,
    );
    await eventually(
      'EndpointNotFound',
      async () => readyOf(await getJson(ns, 'deployedmodel/early-model'))?.reason === 'EndpointNotFound',
    );
    await apply(
      ns,
      `
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: late-endpoint }
spec: { displayName: Late }
`,
    );
    await waitReady(ns, 'deployedmodel/early-model predictionendpoint/late-endpoint');
    const dm = await getJson(ns, 'deployedmodel/early-model');
    const id = dm.status?.id as string;
    expect(id).toMatch(/^[0-9]{10}$/);
    const ep = await getJson(ns, 'predictionendpoint/late-endpoint');
    expect(ep.status?.deployedModels).toEqual([expect.objectContaining({ id, deployedModelRef: 'early-model' })]);
  });

  it('reports a split naming no model, then undeploy is blocked by traffic until the split moves', async () => {
    await apply(
      ns,
      `
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: canary }
spec:
  displayName: Canary
  trafficSplit: { "1": 90, "2": 10 }
---
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: canary-one }
spec: { endpointRef: { name: canary }, id: "1", model: projects/p/locations/l/models/a, automaticResources: { minReplicaCount: 1 } }
`,
    );
    await eventually(
      'TrafficSplitUnresolved',
      async () => readyOf(await getJson(ns, 'predictionendpoint/canary'))?.reason === 'TrafficSplitUnresolved',
    );
    expect(readyOf(await getJson(ns, 'predictionendpoint/canary'))?.message).toContain('spec.trafficSplit[2]');
    await apply(
      ns,
      `
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: canary-two }
spec: { endpointRef: { name: canary }, id: "2", model: projects/p/locations/l/models/b, automaticResources: { minReplicaCount: 1 } }
`,
    );
    await waitReady(ns, 'predictionendpoint/canary deployedmodel/canary-two');

    const del = await kubectl(['delete', '-n', ns, 'deployedmodel/canary-two', '--wait=false']);
    expect(del.code, del.stderr).toBe(0);
    await eventually(
      'UndeployBlocked',
      async () => readyOf(await getJson(ns, 'deployedmodel/canary-two'))?.reason === 'UndeployBlocked',
    );
    // The model still serves its 10 % while its deletion waits: the waiting is its own condition's news, and the
    // endpoint says only what is true (Ready, the model listed as serving), so kstatus does not read it InProgress.
    for (const deadline = Date.now() + 3_000; Date.now() < deadline;) {
      const ep = await getJson(ns, 'predictionendpoint/canary');
      expect(readyOf(ep)).toMatchObject({ status: 'True', reason: 'Reconciled' });
      const two = (ep.status?.deployedModels as Array<{ id: string; ready: string }>).find((d) => d.id === '2');
      expect(two).toMatchObject({ ready: 'True' });
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(readyOf(await getJson(ns, 'deployedmodel/canary-two'))?.message).toContain('keeps serving');
    const patched = await kubectl([
      'patch',
      '-n',
      ns,
      'predictionendpoint/canary',
      '--type=merge',
      '-p',
      '{"spec":{"trafficSplit":{"1":100,"2":null}}}',
    ]);
    expect(patched.code, patched.stderr).toBe(0);
    await eventually(
      'canary-two gone',
      async () => (await kubectl(['get', '-n', ns, 'deployedmodel/canary-two'])).code !== 0,
    );
    await eventually('endpoint status without model 2', async () => {
      const ep = await getJson(ns, 'predictionendpoint/canary');
      const ids = (ep.status?.deployedModels as Array<{ id: string }>).map((d) => d.id);
      return readyOf(ep)?.status === 'True' && ids.length === 1 && ids[0] === '1';
    });
  });

  it('holds an endpoint deletion while models reference it, then completes', async () => {
    await apply(
      ns,
      `
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: doomed }
spec: { displayName: Doomed }
---
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: doomed-model }
spec: { endpointRef: { name: doomed }, model: projects/p/locations/l/models/a, automaticResources: { minReplicaCount: 1 } }
`,
    );
    await waitReady(ns, 'predictionendpoint/doomed deployedmodel/doomed-model');
    expect((await kubectl(['delete', '-n', ns, 'predictionendpoint/doomed', '--wait=false'])).code).toBe(0);
    await eventually('DeletionBlocked', async () => {
      const c = readyOf(await getJson(ns, 'predictionendpoint/doomed'));
      return c?.reason === 'DeletionBlocked' && c.message?.includes('doomed-model');
    });
    expect((await kubectl(['delete', '-n', ns, 'deployedmodel/doomed-model', '--wait=false'])).code).toBe(0);
    await eventually(
      'endpoint gone',
      async () => (await kubectl(['get', '-n', ns, 'predictionendpoint/doomed'])).code !== 0,
    );
  });

  it('reports a duplicate explicit id on the younger model', async () => {
    await apply(
      ns,
      `
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: dup }
spec: { displayName: Dup }
---
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: dup-first }
spec: { endpointRef: { name: dup }, id: "77", model: projects/p/locations/l/models/a, automaticResources: { minReplicaCount: 1 } }
`,
    );
    await waitReady(ns, 'deployedmodel/dup-first');
    await apply(
      ns,
      `
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: dup-second }
spec: { endpointRef: { name: dup }, id: "77", model: projects/p/locations/l/models/b, automaticResources: { minReplicaCount: 1 } }
`,
    );
    await eventually(
      'DuplicateId',
      async () => readyOf(await getJson(ns, 'deployedmodel/dup-second'))?.reason === 'DuplicateId',
    );
    expect(readyOf(await getJson(ns, 'deployedmodel/dup-first'))?.status).toBe('True');
  });
});
