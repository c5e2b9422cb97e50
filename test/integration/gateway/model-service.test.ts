/**
 * Vertex's ModelService on the cluster, driven by the unmodified Node `@google-cloud/aiplatform` client over gRPC
 * (and a few calls over REST, `fallback: true`), against a TLS gateway with authentication on. At each step the
 * Model object is read back as `kubectl get model -o json` shows it: the caller's field manager
 * (`vertex-api/<user>`, a server-side apply) and the written-by annotation. Then the refusals: an unauthorised
 * caller (7, nothing written), a field Argo CD owns (ABORTED naming it, nothing written), the refuse annotation
 * (FAILED_PRECONDITION), a bad model_id (INVALID_ARGUMENT with a BadRequest naming model_id), and an operation
 * answered the same by a second gateway started after the first was closed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v1 as aiplatform } from '@google-cloud/aiplatform';
import { Agent, fetch as undiciFetch, request } from 'undici';
import yaml from 'js-yaml';
import { bearerTokenAuth, gatewayGrpcClientOptions } from '../../../examples/gateway-client/bearer-token-auth.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { DEFAULT_AUTH_SETTINGS } from '../../../src/gateway/auth/settings.js';
import type { GatewayServer } from '../../../src/gateway/server.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { testGatewayTls, type TestGatewayTls } from '../../support/gateway-tls.js';
import { applyCallerRoles, bindRole, createServiceAccount, mintToken } from '../../support/service-accounts.js';
import {
  apply,
  CapturedLog,
  endpointManifest,
  eventually,
  setUpNamespace,
  startGateway,
  type GatewayEnv,
} from './harness.js';

const AUDIENCE = 'endpoint-operator-gateway';
const IMAGE = 'europe-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-3:latest';
let env: GatewayEnv;
let gateway: GatewayServer | undefined;
let port = 0;
let tls: TestGatewayTls;
let https: Agent;
let ns = '';
let parent = '';
const tokens: Record<string, string> = {};
const log = new CapturedLog();
const clients: { close(): Promise<void> }[] = [];

function grpcClient(token: string): aiplatform.ModelServiceClient {
  const client = new aiplatform.ModelServiceClient(
    gatewayGrpcClientOptions(`https://localhost:${port}`, tls.ca, bearerTokenAuth(token)),
  );
  clients.push(client);
  return client;
}

/** REST (`fallback: true`) with the gateway's CA trusted through undici's dispatcher. */
function restClient(token: string): aiplatform.ModelServiceClient {
  const auth = {
    getRequestHeaders: async () => ({ authorization: `Bearer ${token}` }),
    fetch: (url: string | URL, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${token}`);
      return undiciFetch(url, {
        ...(init as object),
        headers,
        dispatcher: https,
      } as never) as unknown as Promise<Response>;
    },
  };
  const client = new aiplatform.ModelServiceClient({
    apiEndpoint: 'localhost',
    port,
    protocol: 'https',
    fallback: true,
    authClient: auth as never,
  });
  clients.push(client);
  return client;
}

async function startOneGateway(): Promise<void> {
  const started = await startGateway(env, log.logger, {
    auth: DEFAULT_AUTH_SETTINGS,
    tls: { cert: tls.cert, key: tls.key },
  });
  gateway = started.gateway;
  port = Number(new URL(started.url).port);
}

async function model(name: string): Promise<KubeObject | undefined> {
  const r = await kubectl([
    'get',
    '-n',
    ns,
    `model/${name}`,
    '-o',
    'json',
    '--show-managed-fields',
    '--ignore-not-found',
  ]);
  return r.stdout.trim() === '' ? undefined : (JSON.parse(r.stdout) as KubeObject);
}

function managers(obj: KubeObject | undefined): string[] {
  return (obj?.metadata.managedFields ?? []).map((e) => `${e.manager ?? ''}/${e.operation ?? ''}`);
}

function spec(obj: KubeObject | undefined): Record<string, unknown> {
  return (obj?.spec ?? {}) as Record<string, unknown>;
}

async function failure(p: Promise<unknown>): Promise<{ code: number; details: string; statusDetails?: unknown }> {
  try {
    await p;
  } catch (err) {
    return err as { code: number; details: string };
  }
  throw new Error('the call succeeded');
}

const deployer = () => `system:serviceaccount:${ns}:deployer`;
const manager = () => `vertex-api/${deployer()}`;

beforeAll(async () => {
  process.env['METADATA_SERVER_DETECTION'] = 'none';
  tls = await testGatewayTls();
  https = new Agent({ connect: { ca: tls.ca } });
  env = await setUpNamespace(await createTestNamespace('gateway-models'));
  ns = env.namespace;
  parent = `projects/${ns}/locations/europe-west4`;
  await applyCallerRoles();
  for (const sa of ['deployer', 'unbound']) await createServiceAccount(ns, sa);
  await bindRole(ns, 'deployer', 'endpoint-operator-model-deployer', 'deployer');
  tokens.deployer = await mintToken(ns, 'deployer', [AUDIENCE]);
  tokens.unbound = await mintToken(ns, 'unbound', [AUDIENCE]);
  await startOneGateway();
}, 240_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gateway?.close();
  await https?.close();
  await env?.operator.stop();
});

describe('ModelService through the Node client', () => {
  const name = () => `${parent}/models/iris`;

  it('uploads a model: the operation ends with UploadModelResponse, the object carries the caller', async () => {
    const client = grpcClient(tokens.deployer ?? '');
    const [operation] = await client.uploadModel({
      parent,
      modelId: 'iris',
      model: {
        displayName: 'Iris',
        description: 'logistic regression',
        labels: { team: 'ml' },
        artifactUri: 'gs://demo-models/iris/1',
        containerSpec: { imageUri: IMAGE, predictRoute: '/predict', healthRoute: '/health' },
      },
    });
    expect(operation.name).toMatch(new RegExp(`^${name()}/operations/[A-Za-z0-9_-]+$`));
    const [response] = await operation.promise();
    expect(response).toMatchObject({ model: name(), modelVersionId: '1' });
    const obj = await model('iris');
    expect(managers(obj)).toContain(`${manager()}/Apply`);
    expect(obj?.metadata.annotations?.['endpoint-operator.dev/written-by']).toBe(deployer());
    expect(spec(obj)).toMatchObject({
      displayName: 'Iris',
      versions: [{ id: '1', artifactUri: 'gs://demo-models/iris/1', containerSpec: { imageUri: IMAGE } }],
      versionAliases: [{ alias: 'default', versionId: '1' }],
    });
  });

  it('gets it as Vertex returns a Model, with what the Python SDK reads before deploying', async () => {
    const [got] = await grpcClient(tokens.deployer ?? '').getModel({ name: name() });
    expect(got).toMatchObject({
      name: name(),
      versionId: '1',
      versionAliases: ['default'],
      displayName: 'Iris',
      artifactUri: 'gs://demo-models/iris/1',
      containerSpec: { imageUri: IMAGE, predictRoute: '/predict', healthRoute: '/health' },
      supportedDeploymentResourcesTypes: ['DEDICATED_RESOURCES'],
      labels: { team: 'ml' },
    });
    expect(got.versionCreateTime?.seconds).toBeDefined();
  });

  it('uploads a second version with parent_model, moves aliases, lists versions, updates', async () => {
    const client = grpcClient(tokens.deployer ?? '');
    const [operation] = await client.uploadModel({
      parent,
      parentModel: name(),
      model: {
        displayName: 'Iris',
        artifactUri: 'gs://demo-models/iris/2',
        containerSpec: { imageUri: IMAGE },
        versionAliases: ['challenger'],
      },
    });
    const [response] = await operation.promise();
    expect(response).toMatchObject({ model: name(), modelVersionId: '2' });
    expect(spec(await model('iris'))).toMatchObject({
      versions: [{ id: '1' }, { id: '2', artifactUri: 'gs://demo-models/iris/2' }],
      versionAliases: [
        { alias: 'default', versionId: '1' },
        { alias: 'challenger', versionId: '2' },
      ],
    });

    const [merged] = await client.mergeVersionAliases({
      name: `${name()}@2`,
      versionAliases: ['default', '-challenger'],
    });
    expect(merged.versionAliases).toEqual(['default']);
    expect(spec(await model('iris')).versionAliases).toEqual([{ alias: 'default', versionId: '2' }]);

    const [versions] = await client.listModelVersions({ name: name() });
    expect(versions.map((v) => [v.versionId, v.versionAliases])).toEqual([
      ['1', []],
      ['2', ['default']],
    ]);

    const [updated] = await client.updateModel({
      model: { name: name(), displayName: 'Iris (retrained)', labels: { team: 'ds' } },
      updateMask: { paths: ['display_name', 'labels'] },
    });
    expect(updated).toMatchObject({ displayName: 'Iris (retrained)', labels: { team: 'ds' }, versionId: '2' });
    const obj = await model('iris');
    expect(spec(obj)).toMatchObject({ displayName: 'Iris (retrained)', labels: { team: 'ds' } });
    expect((spec(obj).versions as unknown[]).length).toBe(2);
  });

  it('deletes a version, then (over REST) reads and deletes the model', async () => {
    const [operation] = await grpcClient(tokens.deployer ?? '').deleteModelVersion({ name: `${name()}@1` });
    await operation.promise();
    expect((spec(await model('iris')).versions as { id: string }[]).map((v) => v.id)).toEqual(['2']);

    const rest = restClient(tokens.deployer ?? '');
    const [got] = await rest.getModel({ name: `${name()}@default` });
    expect(got).toMatchObject({ name: name(), versionId: '2', displayName: 'Iris (retrained)' });
    const [listed] = await rest.listModels({ parent, filter: 'model="iris"' });
    expect(listed.map((m) => m.name)).toEqual([name()]);
    const [deletion] = await rest.deleteModel({ name: name() });
    await deletion.promise();
    expect(await model('iris')).toBeUndefined();
  });
});

describe('refusals', () => {
  it('an unauthorised caller: 7 naming the role, nothing written', async () => {
    const err = await failure(
      grpcClient(tokens.unbound ?? '').uploadModel({
        parent,
        modelId: 'denied',
        model: { displayName: 'x', containerSpec: { imageUri: IMAGE } },
      }),
    );
    expect(err.code, err.details).toBe(7);
    expect(err.details).toContain('endpoint-operator-model-deployer');
    expect(err.details).toContain(`namespace "${ns}"`);
    expect(await model('denied')).toBeUndefined();
  });

  it('a field Argo CD owns: ABORTED naming it, nothing written; the refuse annotation: FAILED_PRECONDITION', async () => {
    const manifest = {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'Model',
      metadata: { name: 'gitops', namespace: ns },
      spec: {
        displayName: 'From Git',
        versions: [{ id: '1', containerSpec: { imageUri: IMAGE } }],
        versionAliases: [{ alias: 'default', versionId: '1' }],
      },
    };
    const applied = await kubectl(['apply', '--server-side', '--field-manager', 'argocd-controller', '-f', '-'], {
      input: yaml.dump(manifest),
    });
    expect(applied.code, applied.stderr).toBe(0);
    const client = grpcClient(tokens.deployer ?? '');
    const gitops = `${parent}/models/gitops`;
    const err = await failure(
      client.updateModel({
        model: { name: gitops, displayName: 'From a notebook' },
        updateMask: { paths: ['display_name'] },
      }),
    );
    expect(err.code, err.details).toBe(10);
    expect(err.details).toContain('spec.displayName is managed by "argocd-controller"');
    const obj = await model('gitops');
    expect(spec(obj).displayName).toBe('From Git');
    expect(managers(obj).filter((m) => m.startsWith('vertex-api/'))).toEqual([]);

    const annotated = await kubectl(['annotate', '-n', ns, 'model/gitops', 'endpoint-operator.dev/api-writes=refuse']);
    expect(annotated.code, annotated.stderr).toBe(0);
    const refused = await failure(client.mergeVersionAliases({ name: `${gitops}@1`, versionAliases: ['champion'] }));
    expect(refused.code, refused.details).toBe(9);
    expect(refused.details).toContain('endpoint-operator.dev/api-writes: refuse');
    expect(spec(await model('gitops')).versionAliases).toEqual([{ alias: 'default', versionId: '1' }]);
  });

  it('a bad model_id: INVALID_ARGUMENT with a BadRequest naming model_id, over gRPC and REST', async () => {
    const body = { modelId: 'Bad_Id', model: { displayName: 'x', containerSpec: { imageUri: IMAGE } } };
    const err = await failure(grpcClient(tokens.deployer ?? '').uploadModel({ parent, ...body }));
    expect(err.code, err.details).toBe(3);
    expect(err.details).toContain('model_id');
    const res = await request(`https://localhost:${port}/v1/${parent}/models:upload`, {
      dispatcher: https,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.deployer ?? ''}` },
      body: JSON.stringify(body),
    });
    expect(res.statusCode).toBe(400);
    const answer = (await res.body.json()) as {
      error: { status: string; details: { '@type': string; fieldViolations: { field: string }[] }[] };
    };
    expect(answer.error.status).toBe('INVALID_ARGUMENT');
    expect(answer.error.details[0]?.['@type']).toBe('type.googleapis.com/google.rpc.BadRequest');
    expect(answer.error.details[0]?.fieldViolations.map((v) => v.field)).toEqual(['model_id']);
  });
});

describe('operations are derived, not stored', () => {
  it('a second gateway, started after the first is closed, answers the same operation', async () => {
    const first = grpcClient(tokens.deployer ?? '');
    const [operation] = await first.uploadModel({
      parent,
      modelId: 'survivor',
      model: { displayName: 'survivor', containerSpec: { imageUri: IMAGE } },
    });
    await operation.promise();
    const [before] = await first.operationsClient.getOperation({ name: operation.name ?? '' } as never);
    await gateway?.close();
    gateway = undefined;
    await startOneGateway();
    const second = grpcClient(tokens.deployer ?? '');
    const [after] = await second.operationsClient.getOperation({ name: operation.name ?? '' } as never);
    expect(after.name).toBe(before.name);
    expect(after.done).toBe(true);
    expect(after.response?.type_url ?? (after.response as { typeUrl?: string } | undefined)?.typeUrl).toBe(
      'type.googleapis.com/google.cloud.aiplatform.v1.UploadModelResponse',
    );
    expect(Buffer.from(after.response?.value ?? []).equals(Buffer.from(before.response?.value ?? []))).toBe(true);
    const decoded = await second.checkUploadModelProgress(operation.name ?? '');
    expect(decoded.result).toMatchObject({ model: `${parent}/models/survivor`, modelVersionId: '1' });

    // ListOperations: the resource's latest API write; WaitOperation (REST) answers at once when done; Cancel refuses.
    const listed = (await second.operationsClient.listOperations({
      name: `${parent}/models/survivor`,
    } as never)) as unknown as [{ name?: string; done?: boolean }[]];
    expect(listed[0].map((o) => [o.name, o.done])).toEqual([[operation.name, true]]);
    const waited = await request(`https://localhost:${port}/v1/${operation.name ?? ''}:wait`, {
      dispatcher: https,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.deployer ?? ''}` },
      body: JSON.stringify({ timeout: '5s' }),
    });
    expect(waited.statusCode).toBe(200);
    expect(await waited.body.json()).toMatchObject({
      name: operation.name,
      done: true,
      response: { '@type': 'type.googleapis.com/google.cloud.aiplatform.v1.UploadModelResponse', modelVersionId: '1' },
    });
    const cancel = await failure(second.operationsClient.cancelOperation({ name: operation.name ?? '' } as never));
    expect(cancel.code, cancel.details).toBe(9);
  });

  it('a gateway with gateway.apiWrites.enabled=false answers every write FAILED_PRECONDITION naming it', async () => {
    const off = await startGateway(env, log.logger, {
      auth: DEFAULT_AUTH_SETTINGS,
      tls: { cert: tls.cert, key: tls.key },
      apiWrites: false,
    });
    try {
      const offPort = Number(new URL(off.url).port);
      const client = new aiplatform.ModelServiceClient(
        gatewayGrpcClientOptions(`https://localhost:${offPort}`, tls.ca, bearerTokenAuth(tokens.deployer ?? '')),
      );
      clients.push(client);
      const err = await failure(
        client.uploadModel({ parent, modelId: 'off', model: { displayName: 'x', containerSpec: { imageUri: IMAGE } } }),
      );
      expect(err.code, err.details).toBe(9);
      expect(err.details).toContain('gateway.apiWrites.enabled');
      expect(await model('off')).toBeUndefined();
      const [read] = await client.getModel({ name: `${parent}/models/survivor` });
      expect(read.versionId).toBe('1');
    } finally {
      await off.gateway.close();
    }
  });

  it("refuses deleting a deployed model with FAILED_PRECONDITION, the admission policy's message", async () => {
    await apply(
      ns,
      endpointManifest('survivor', { '1': 100 }, [
        { name: 'survivor-dm', id: '1', model: `${parent}/models/survivor` },
      ]),
    );
    await eventually('the Model lists its DeployedModel', async () => {
      const m = await model('survivor');
      const listed = (m?.status as { deployedModels?: unknown[] } | undefined)?.deployedModels;
      return Array.isArray(listed) && listed.length === 1 ? m : undefined;
    });
    const err = await failure(grpcClient(tokens.deployer ?? '').deleteModel({ name: `${parent}/models/survivor` }));
    expect(err.code, err.details).toBe(9);
    expect(err.details).toContain('DeployedModel survivor-dm serves version 1');
    expect((await model('survivor'))?.metadata.deletionTimestamp).toBeUndefined();
  });
});
