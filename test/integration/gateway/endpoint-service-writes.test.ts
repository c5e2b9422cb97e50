/**
 * EndpointService's writes through Google's unmodified Node client (@google-cloud/aiplatform EndpointServiceClient)
 * against a TLS gateway with authentication on, over gRPC, and one call over REST (`fallback: true`) through a
 * second gateway replica (which also answers the operation: operations are derived, not stored). Every step is
 * checked with kubectl as a platform team reads it: the objects, their field manager `vertex-api/<user>` and the
 * written-by annotation. The Model the deploys name is applied as GitOps applies it; its pods run on kwok's
 * simulated nodes, which the operator's Ready waits on.
 *
 * Failures: a split Argo CD owns (applied first with --server-side --field-manager argocd-controller) is ABORTED
 * naming it with nothing written; a deploy of a Model that does not exist is NOT_FOUND with nothing written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v1 as aiplatform } from '@google-cloud/aiplatform';
import { request } from 'undici';
import {
  bearerTokenAuth,
  gatewayClientOptions,
  gatewayGrpcClientOptions,
} from '../../../examples/gateway-client/bearer-token-auth.js';
import { DEFAULT_AUTH_SETTINGS } from '../../../src/gateway/auth/settings.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { testGatewayTls, type TestGatewayTls } from '../../support/gateway-tls.js';
import { applyCallerRoles, bindRole, createServiceAccount, mintToken } from '../../support/service-accounts.js';
import { apply, CapturedLog, setUpNamespace, startGateway, type GatewayEnv } from './harness.js';

const AUDIENCE = 'endpoint-operator-gateway';
const LOCATION = 'europe-west4';
const WRITTEN_BY = 'endpoint-operator.dev/written-by';

let env: GatewayEnv;
let ns = '';
let tls: TestGatewayTls;
let grpcGateway: GatewayServer;
let restGateway: GatewayServer;
let grpcPort = 0;
let restUrl = '';
let token = '';
let user = '';
const log = new CapturedLog();

interface Stored {
  metadata: {
    name: string;
    annotations?: Record<string, string>;
    managedFields?: { manager: string; operation: string; fieldsV1?: Record<string, unknown> }[];
    deletionTimestamp?: string;
  };
  spec: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- read back as kubectl prints it
  status?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- idem
}

async function get(resource: string): Promise<Stored | undefined> {
  const r = await kubectl(['get', '-n', ns, resource, '-o', 'json', '--show-managed-fields', '--ignore-not-found']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim() === '' ? undefined : (JSON.parse(r.stdout) as Stored);
}

async function list(resource: string): Promise<Stored[]> {
  const r = await kubectl(['get', '-n', ns, resource, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { items: Stored[] }).items;
}

/** The managers that applied the object (its Apply entries), and the user the annotation names. */
function writers(obj: Stored | undefined): { managers: string[]; writtenBy: string | undefined } {
  return {
    managers: (obj?.metadata.managedFields ?? []).filter((m) => m.operation === 'Apply').map((m) => m.manager),
    writtenBy: obj?.metadata.annotations?.[WRITTEN_BY],
  };
}

const modelManifest = `
apiVersion: prediction.endpoint-operator.dev/v1
kind: Model
metadata: { name: iris }
spec:
  displayName: Iris
  versions:
    - id: "1"
      containerSpec: { imageUri: registry.example/iris:1, predictRoute: /predict, healthRoute: /health }
    - id: "2"
      containerSpec: { imageUri: registry.example/iris:2, predictRoute: /predict, healthRoute: /health }
  versionAliases:
    - { alias: default, versionId: "1" }
`;

const dedicated = { machineSpec: { machineType: 'n1-standard-2' }, minReplicaCount: 1, maxReplicaCount: 1 };

function grpcClient(): aiplatform.EndpointServiceClient {
  return new aiplatform.EndpointServiceClient(
    gatewayGrpcClientOptions(`https://localhost:${grpcPort}`, tls.ca, bearerTokenAuth(token)),
  );
}

beforeAll(async () => {
  process.env['METADATA_SERVER_DETECTION'] = 'none';
  tls = await testGatewayTls();
  ns = await createTestNamespace('endpoint-writes');
  env = await setUpNamespace(ns);
  await applyCallerRoles(); // the shipped roles, endpoint-operator-model-deployer among them
  await createServiceAccount(ns, 'alice');
  await bindRole(ns, 'alice-deploys', 'endpoint-operator-model-deployer', 'alice');
  token = await mintToken(ns, 'alice', [AUDIENCE]);
  user = `system:serviceaccount:${ns}:alice`;
  await apply(ns, modelManifest);
  const a = await startGateway(env, log.logger, { auth: DEFAULT_AUTH_SETTINGS, tls: { cert: tls.cert, key: tls.key } });
  grpcGateway = a.gateway;
  grpcPort = Number(new URL(a.url).port);
  const b = await startGateway(env, log.logger, { auth: DEFAULT_AUTH_SETTINGS });
  restGateway = b.gateway;
  restUrl = b.url;
}, 180_000);

afterAll(async () => {
  await grpcGateway?.close();
  await restGateway?.close();
  // Namespaces are never deleted in this cluster: free the simulated nodes for the other suites.
  await kubectl(['delete', '-n', ns, 'deployedmodels', '--all', '--wait=false']);
  await env?.operator.stop();
});

describe('EndpointService writes through the Node client', () => {
  it("creates, deploys twice, mutates, updates, undeploys and deletes; each step is the caller's objects", async () => {
    const manager = `vertex-api/${user}`;
    const parent = `projects/${ns}/locations/${LOCATION}`;
    const client = grpcClient();
    try {
      // CreateEndpoint with a user-given id.
      const [created] = await client.createEndpoint({ parent, endpoint: { displayName: 'iris' }, endpointId: 'iris' });
      const [endpoint] = await created.promise();
      const name = `${parent}/endpoints/iris`;
      expect(endpoint.name).toBe(name);
      expect(endpoint.displayName).toBe('iris');
      expect(writers(await get('predictionendpoint/iris'))).toEqual({ managers: [manager], writtenBy: user });

      // DeployModel with the "0" placeholder: the operation ends once the model is Ready and serves the split.
      const [deploy1] = await client.deployModel({
        endpoint: name,
        deployedModel: { model: `${parent}/models/iris@1`, displayName: 'iris v1', dedicatedResources: dedicated },
        trafficSplit: { '0': 100 },
      });
      const [first] = await deploy1.promise();
      const id1 = first.deployedModel?.id ?? '';
      expect(id1).toMatch(/^[0-9]{1,10}$/);
      expect(first.deployedModel?.model).toBe(`${parent}/models/iris`);
      expect(first.deployedModel?.modelVersionId).toBe('1');
      const dm1 = await get(`deployedmodel/iris-${id1}`);
      expect(dm1?.spec).toMatchObject({ endpointRef: { name: 'iris' }, id: id1, model: `${parent}/models/iris@1` });
      expect(writers(dm1)).toEqual({ managers: [manager], writtenBy: user });
      const afterFirst = await get('predictionendpoint/iris');
      expect(afterFirst?.spec.trafficSplit).toEqual({ [id1]: 100 });
      expect(afterFirst?.status?.trafficSplit).toEqual({ [id1]: 100 });
      expect(afterFirst?.spec.displayName).toBe('iris'); // the caller's earlier fields are kept by its later applies

      // ListOperations over REST through the other replica: the endpoint's latest API write, derived from the objects.
      const listed = await request(`${restUrl}/v1/${name}/operations`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const { operations } = (await listed.body.json()) as {
        operations?: { name: string; done: boolean; metadata: Record<string, unknown> }[];
      };
      expect(operations?.map((o) => [o.name.startsWith(`${name}/operations/`), o.done, o.metadata['@type']])).toEqual([
        [true, true, 'type.googleapis.com/google.cloud.aiplatform.v1.DeployModelOperationMetadata'],
      ]);

      // A second version beside it, 50/50.
      const [deploy2] = await client.deployModel({
        endpoint: name,
        deployedModel: { model: `${parent}/models/iris@2`, dedicatedResources: dedicated },
        trafficSplit: { '0': 50, [id1]: 50 },
      });
      const [second] = await deploy2.promise();
      const id2 = second.deployedModel?.id ?? '';
      expect(id2).not.toBe(id1);
      const afterSecond = await get('predictionendpoint/iris');
      expect(afterSecond?.spec.trafficSplit).toEqual({ [id1]: 50, [id2]: 50 });
      expect(afterSecond?.status?.trafficSplit).toEqual({ [id1]: 50, [id2]: 50 });

      // MutateDeployedModel: replica counts, the rest of the spec kept.
      const [mutate] = await client.mutateDeployedModel({
        endpoint: name,
        deployedModel: { id: id2, dedicatedResources: { minReplicaCount: 2, maxReplicaCount: 3 } },
        updateMask: { paths: ['dedicated_resources.min_replica_count', 'dedicated_resources.max_replica_count'] },
      });
      const [mutated] = await mutate.promise();
      expect(mutated.deployedModel?.dedicatedResources?.minReplicaCount).toBe(2);
      const dm2 = await get(`deployedmodel/iris-${id2}`);
      expect(dm2?.spec.dedicatedResources).toEqual({
        machineSpec: { machineType: 'n1-standard-2' },
        minReplicaCount: 2,
        maxReplicaCount: 3,
      });
      expect(writers(dm2).managers).toEqual([manager]);

      // UpdateEndpoint with a mask: only the masked fields change.
      const [updated] = await client.updateEndpoint({
        endpoint: { name, displayName: 'iris, two versions', labels: { team: 'ml' }, description: 'not in the mask' },
        updateMask: { paths: ['display_name', 'labels'] },
      });
      expect(updated.displayName).toBe('iris, two versions');
      const afterUpdate = await get('predictionendpoint/iris');
      expect(afterUpdate?.spec).toMatchObject({ displayName: 'iris, two versions', labels: { team: 'ml' } });
      expect(afterUpdate?.spec.description).toBeUndefined();
      expect(afterUpdate?.spec.trafficSplit).toEqual({ [id1]: 50, [id2]: 50 });

      // UndeployModel with the split that remains: the split moves first, then the DeployedModel goes.
      const [undeploy1] = await client.undeployModel({
        endpoint: name,
        deployedModelId: id1,
        trafficSplit: { [id2]: 100 },
      });
      await undeploy1.promise();
      expect(await get(`deployedmodel/iris-${id1}`)).toBeUndefined();
      expect((await get('predictionendpoint/iris'))?.spec.trafficSplit).toEqual({ [id2]: 100 });

      // DeleteEndpoint while a model is deployed: Vertex's answer, naming it, and nothing deleted.
      const refused = await client.deleteEndpoint({ name }).catch((e: { code: number; details: string }) => e);
      expect(refused).toMatchObject({ code: 9 });
      expect((refused as { details: string }).details).toContain(`${id2} (DeployedModel "iris-${id2}")`);
      expect((await get('predictionendpoint/iris'))?.metadata.deletionTimestamp).toBeUndefined();

      // The last UndeployModel over REST, through another replica of the gateway; its operation is answered there.
      const rest = new aiplatform.EndpointServiceClient(gatewayClientOptions(restUrl, bearerTokenAuth(token)) as never);
      try {
        const [undeploy2] = await rest.undeployModel({
          endpoint: name,
          deployedModelId: id2,
          trafficSplit: { [id2]: 0 },
        });
        await undeploy2.promise();
      } finally {
        await rest.close();
      }
      expect(await get(`deployedmodel/iris-${id2}`)).toBeUndefined();
      expect((await get('predictionendpoint/iris'))?.spec.trafficSplit).toEqual({});

      const [deleted] = await client.deleteEndpoint({ name });
      await deleted.promise();
      expect(await get('predictionendpoint/iris')).toBeUndefined();
    } finally {
      await client.close();
    }
  }, 300_000);
});

describe('EndpointService writes that change nothing', () => {
  const gitops = `
apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: gitops }
spec:
  displayName: GitOps
  trafficSplit: { "1": 100 }
---
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: gitops-one }
spec:
  endpointRef: { name: gitops }
  id: "1"
  model: projects/NS/locations/${LOCATION}/models/iris
  dedicatedResources: { machineSpec: { machineType: n1-standard-2 }, minReplicaCount: 1 }
`;

  beforeAll(async () => {
    const r = await kubectl(['apply', '-n', ns, '--server-side', '--field-manager', 'argocd-controller', '-f', '-'], {
      input: gitops.replace('NS', ns),
    });
    expect(r.code, r.stderr).toBe(0);
  });

  async function deployedNames(): Promise<string[]> {
    return (await list('deployedmodels'))
      .filter((d) => d.spec.endpointRef?.name === 'gitops')
      .map((d) => d.metadata.name)
      .sort();
  }

  /** DeployModel onto `endpoint` over gRPC; its refusal ({code: 0} if it was not refused). */
  async function refusal(
    endpoint: string,
    deployedModel: Record<string, unknown>,
    trafficSplit: Record<string, number>,
  ): Promise<{ code: number; details: string }> {
    const client = grpcClient();
    try {
      await client.deployModel({
        endpoint: `projects/${ns}/locations/${LOCATION}/endpoints/${endpoint}`,
        deployedModel: { model: `projects/${ns}/locations/${LOCATION}/models/iris@2`, ...deployedModel },
        trafficSplit,
      });
      return { code: 0, details: '' };
    } catch (err) {
      return err as { code: number; details: string };
    } finally {
      await client.close();
    }
  }

  it('answers ABORTED naming Argo CD for a split it owns, and writes nothing', async () => {
    const err = await refusal('gitops', { dedicatedResources: dedicated }, { '0': 50, '1': 50 });
    expect(err.code).toBe(10);
    expect(err.details).toContain('spec.trafficSplit is managed by "argocd-controller"');
    expect(await deployedNames()).toEqual(['gitops-one']);
    const pe = await get('predictionendpoint/gitops');
    expect(pe?.spec.trafficSplit).toEqual({ '1': 100 });
    expect(writers(pe).managers).toEqual(['argocd-controller']);
  });

  it('answers a malformed id, a split not adding up to 100 and a refused resource with the request fields, and writes nothing', async () => {
    const badId = await refusal('gitops', { id: 'abc', dedicatedResources: dedicated }, {});
    expect(badId.code).toBe(3);
    expect(badId.details).toContain('deployed_model.id: "abc": a deployed model id must be 1 to 10 digits');
    const badSplit = await refusal('gitops', { dedicatedResources: dedicated }, { '0': 60, '1': 30 });
    expect(badSplit.code).toBe(3);
    expect(badSplit.details).toContain('traffic_split: the percentages must add up to 100; they add up to 90');
    const badReplicas = await refusal(
      'gitops',
      { dedicatedResources: { ...dedicated, minReplicaCount: 3, maxReplicaCount: 2 } },
      {},
    );
    expect(badReplicas.code).toBe(3);
    expect(badReplicas.details).toContain('deployed_model.dedicated_resources.max_replica_count');
    expect(await deployedNames()).toEqual(['gitops-one']);
  });

  it('answers FAILED_PRECONDITION for a deploy onto an endpoint being deleted, and writes nothing', async () => {
    const leaving = `apiVersion: prediction.endpoint-operator.dev/v1
kind: PredictionEndpoint
metadata: { name: leaving, finalizers: [example.com/hold] }
spec: { displayName: Leaving }
`;
    await apply(ns, leaving);
    expect((await kubectl(['delete', '-n', ns, 'predictionendpoint/leaving', '--wait=false'])).code).toBe(0);
    try {
      const err = await refusal('leaving', { dedicatedResources: dedicated }, { '0': 100 });
      expect(err.code).toBe(9);
      expect(err.details).toContain('/endpoints/leaving" is being deleted');
    } finally {
      const release = '[{"op":"remove","path":"/metadata/finalizers/0"}]';
      await kubectl(['patch', '-n', ns, 'predictionendpoint/leaving', '--type=json', '-p', release]);
    }
    expect((await list('deployedmodels')).filter((d) => d.spec.endpointRef?.name === 'leaving')).toEqual([]);
  });

  it('answers NOT_FOUND for a Model that does not exist, and writes nothing', async () => {
    const err = await refusal(
      'gitops',
      { model: `projects/${ns}/locations/${LOCATION}/models/nope`, dedicatedResources: dedicated },
      { '0': 100 },
    );
    expect(err.code).toBe(5);
    expect(err.details).toContain(`Model "projects/${ns}/locations/${LOCATION}/models/nope" not found`);
    expect(await deployedNames()).toEqual(['gitops-one']);
    expect((await get('predictionendpoint/gitops'))?.spec.trafficSplit).toEqual({ '1': 100 });
  });
});
