import { describe, expect, it } from 'vitest';
import {
  backendReadiness,
  type BackendReadiness,
  type BackendWorld,
} from '../../../src/reconcilers/backend-readiness.js';
import {
  computeDeployedModelStatus,
  deployedModelServingVerdict,
} from '../../../src/reconcilers/deployed-model-status.js';
import { computePredictionEndpointStatus } from '../../../src/reconcilers/prediction-endpoint-status.js';
import { resolveModelStates } from '../../../src/reconcilers/deployed-model-ids.js';
import {
  decodeEndpointSlice,
  decodeService,
  type EndpointSlice,
  type Service,
} from '../../../src/runtime/endpoint-slices.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { deployedModel, endpoint } from './fixtures.js';

const NOW = '2026-02-01T10:00:00Z';
const backend = {
  service: { name: 'fraud-gbt', port: 'http' as string | number },
  protocol: 'KServeV1' as const,
  modelName: 'fraud-gbt',
};

function service(ports: { name?: string; port: number }[]): Service {
  const decoded = decodeService({ metadata: { name: 'fraud-gbt', namespace: 'ns' }, spec: { ports } } as KubeObject);
  if (decoded === undefined) throw new Error('did not decode');
  return decoded;
}

function slice(
  endpoints: { addresses: string[]; conditions?: { ready: boolean } }[],
  port = { name: 'http', port: 8080 },
): EndpointSlice {
  const decoded = decodeEndpointSlice({
    metadata: { name: 'fraud-gbt-abc', namespace: 'ns', labels: { 'kubernetes.io/service-name': 'fraud-gbt' } },
    addressType: 'IPv4',
    ports: [port],
    endpoints,
  } as KubeObject);
  if (decoded === undefined) throw new Error('did not decode');
  return decoded;
}

function world(overrides: Partial<BackendWorld>): BackendWorld {
  return {
    backend,
    namespace: 'ns',
    service: service([{ name: 'http', port: 80 }]),
    slices: [slice([{ addresses: ['10.0.0.1'] }])],
    ...overrides,
  };
}

describe('backend readiness', () => {
  it('is ready when the Service port has a ready endpoint, by port name or number', () => {
    expect(backendReadiness(world({}))).toEqual({ state: 'ready', summary: 'Service "fraud-gbt" port 80 (http)' });
    expect(backendReadiness(world({ backend: { ...backend, service: { name: 'fraud-gbt', port: 80 } } })).state).toBe(
      'ready',
    );
  });

  it('says the Service is missing', () => {
    const r = backendReadiness(world({ service: undefined, slices: [] }));
    expect(r).toMatchObject({ state: 'unavailable' });
    expect(r.state === 'unavailable' && r.message).toBe(
      'spec.backend.service.name: Service "fraud-gbt" not found in namespace "ns"; create it (the model becomes Ready once its port "http" has a ready endpoint)',
    );
  });

  it('says the port is unknown, listing the ports the Service has', () => {
    const r = backendReadiness(world({ service: service([{ name: 'grpc', port: 9000 }, { port: 81 }]) }));
    expect(r.state === 'unavailable' && r.message).toBe(
      'spec.backend.service.port: Service "fraud-gbt" has no port "http" (its ports: 9000 (grpc), 81); name one of its ports by number or name',
    );
    const byNumber = backendReadiness(world({ backend: { ...backend, service: { name: 'fraud-gbt', port: 8080 } } }));
    expect(byNumber.state === 'unavailable' && byNumber.message).toContain('has no port 8080 (its ports: 80 (http))');
  });

  it('says there is no ready endpoint, and whether any endpoint is listed', () => {
    const none = backendReadiness(world({ slices: [] }));
    expect(none.state === 'unavailable' && none.message).toBe(
      'Service "fraud-gbt" port 80 (http) has no ready endpoint (no EndpointSlice lists an endpoint for it); check that the model server\'s pods are running and pass their readiness probe',
    );
    const notReady = backendReadiness(
      world({
        slices: [
          slice([
            { addresses: ['10.0.0.1'], conditions: { ready: false } },
            { addresses: ['10.0.0.2'], conditions: { ready: false } },
          ]),
        ],
      }),
    );
    expect(notReady.state === 'unavailable' && notReady.message).toContain(
      '(2 endpoint(s) listed, none ready on that port)',
    );
    const otherPort = backendReadiness(
      world({ slices: [slice([{ addresses: ['10.0.0.1'] }], { name: 'metrics', port: 9090 })] }),
    );
    expect(otherPort.state).toBe('unavailable');
  });

  it('does not probe a URL backend, and has nothing to say without a backend', () => {
    expect(
      backendReadiness(
        world({
          backend: { url: 'https://models.example.com' },
          service: undefined,
        }),
      ),
    ).toEqual({ state: 'url', url: 'https://models.example.com' });
    expect(backendReadiness(world({ backend: undefined }))).toEqual({ state: 'none' });
  });
});

describe('DeployedModel status with a backend', () => {
  const ep = endpoint('ep1', { displayName: 'Ep', trafficSplit: { '1': 100 } }).build();
  const model = deployedModel('dm1', 'ep1', { id: '1', backend }).build();
  const compute = (b: ReturnType<typeof backendReadiness>): ReturnType<typeof computeDeployedModelStatus> =>
    computeDeployedModelStatus({
      model,
      endpoint: ep,
      state: { state: 'deployed', id: '1' },
      specErrors: [],
      backend: b,
      project: '{namespace}',
      location: 'us-central1',
      now: NOW,
    });

  it('is Ready=False BackendUnavailable with the reason, while still deployed (id and endpoint reported)', () => {
    const { status, verdict } = compute({
      state: 'unavailable',
      message: 'Service "fraud-gbt" port 80 (http) has no ready endpoint (...)',
    });
    expect(verdict.status).toBe('False');
    expect(verdict.reason).toBe('BackendUnavailable');
    expect(verdict.message).toBe(
      'deployed to PredictionEndpoint "ep1" with id 1, but its model server cannot be called: Service "fraud-gbt" port 80 (http) has no ready endpoint (...)',
    );
    expect(status.id).toBe('1');
    expect(status.endpoint).toBe('projects/ns/locations/us-central1/endpoints/ep1');
  });

  it('is Ready=True once the backend has a ready endpoint, and says a URL backend is not probed', () => {
    expect(compute({ state: 'ready', summary: 'Service "fraud-gbt" port 80 (http)' }).verdict).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
    });
    expect(compute({ state: 'url', url: 'https://m.example.com' }).verdict.message).toContain(
      '(a URL backend is not probed)',
    );
    expect(compute({ state: 'none' }).verdict.message).toContain('no spec.backend: recorded, not callable');
  });
});

describe('DeployedModel status with a containerSpec', () => {
  const ep = endpoint('ep1', { displayName: 'Ep', trafficSplit: { '1': 100 } }).build();
  const model = deployedModel('dm1', 'ep1', { id: '1' }).build();
  const available = {
    replicaCount: 1,
    availableReplicaCount: 1,
    stage: 'FINISHING_UP' as const,
    verdict: { status: 'True' as const, reason: 'Reconciled' as const, message: '1 of 1 replica(s) available' },
    names: { deployment: 'dm-dm1', service: 'dm-dm1' },
  };
  const compute = (b: BackendReadiness): ReturnType<typeof computeDeployedModelStatus> =>
    computeDeployedModelStatus({
      model,
      endpoint: ep,
      state: { state: 'deployed', id: '1' },
      specErrors: [],
      backend: b,
      serving: available,
      project: '{namespace}',
      location: 'us-central1',
      now: NOW,
    });

  it('is not Ready while its available replicas are not yet ready endpoints of its Service (what the gateway routes by)', () => {
    const waiting = compute({
      state: 'unavailable',
      message: 'Service "dm-dm1" port 8080 (http) has no ready endpoint',
    });
    expect(waiting.verdict).toMatchObject({
      status: 'False',
      reason: 'ReplicasStarting',
      message: expect.stringContaining('1 of 1 replica(s) available, but Service "dm-dm1" port 8080 (http) has no'),
    });
    expect(compute({ state: 'ready', summary: 'Service "dm-dm1" port 8080 (http)' }).verdict).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
    });
  });
});

describe('PredictionEndpoint status name and url', () => {
  const compute = (
    ep: KubeObject,
    models: KubeObject[] = [],
    gatewayUrl?: string,
    backends: Record<string, BackendReadiness> = {},
  ): ReturnType<typeof computePredictionEndpointStatus> => {
    const states = resolveModelStates(models, () => true, new Map());
    return computePredictionEndpointStatus({
      endpoint: ep,
      models,
      states,
      specErrors: [],
      modelReadiness: (model) =>
        deployedModelServingVerdict({
          model,
          endpoint: ep,
          state: states.get(model.metadata.name ?? ''),
          specErrors: [],
          backend: backends[model.metadata.name ?? ''] ?? { state: 'none' },
          project: '{namespace}',
          location: 'us-central1',
          now: NOW,
        }),
      project: '{namespace}',
      location: 'us-central1',
      gatewayUrl,
      now: NOW,
    });
  };

  it('takes the namespace as the project, so same-named endpoints of two namespaces differ', () => {
    const a = endpoint('fraud-scoring').build();
    const b = structuredClone(a);
    b.metadata.namespace = 'team-b';
    expect(compute(a).status.name).toBe('projects/ns/locations/us-central1/endpoints/fraud-scoring');
    expect(compute(b).status.name).toBe('projects/team-b/locations/us-central1/endpoints/fraud-scoring');
  });

  it('rewrites a status.name of the old scheme (migration), and publishes the url to call', () => {
    const old = endpoint('fraud-scoring')
      .status({ name: 'projects/endpoint-operator/locations/us-central1/endpoints/fraud-scoring' })
      .build();
    const { status } = compute(old, [], 'http://gateway.eo-system.svc:8080/');
    expect(status.name).toBe('projects/ns/locations/us-central1/endpoints/fraud-scoring');
    expect(status.url).toBe(
      'http://gateway.eo-system.svc:8080/v1/projects/ns/locations/us-central1/endpoints/fraud-scoring',
    );
    expect(compute(old).status.url).toBeUndefined();
  });

  it('judges a model whose deletion waits for traffic by whether it serves, not by its deletion', () => {
    const ep = endpoint('ep1', { displayName: 'Ep', trafficSplit: { '1': 70, '2': 30 } }).build();
    const one = deployedModel('one', 'ep1', { id: '1' }).build();
    const leaving = deployedModel('leaving', 'ep1', { id: '2' }).deleting().build();
    const serving = compute(ep, [one, leaving], undefined, {
      one: { state: 'ready', summary: 'Service "a" port 80' },
      leaving: { state: 'ready', summary: 'Service "b" port 80' },
    });
    expect(serving.verdict).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(serving.status.deployedModels.map((d) => [d.id, d.ready, d.reason])).toEqual([
      ['1', 'True', 'Reconciled'],
      ['2', 'True', 'Reconciled'],
    ]);
    // Its server fails meanwhile: then its calls do answer 503, and the endpoint says so.
    const failing = compute(ep, [one, leaving], undefined, {
      one: { state: 'ready', summary: 'Service "a" port 80' },
      leaving: { state: 'unavailable', message: 'no ready endpoint' },
    });
    expect(failing.verdict).toMatchObject({ status: 'False', reason: 'DeployedModelUnavailable' });
    expect(failing.verdict.message).toContain('which is not Ready (BackendUnavailable)');
  });

  it("shows each deployed model's readiness, the model's own verdict from the same world", () => {
    const ep = endpoint('ep1', { displayName: 'Ep', trafficSplit: { '1': 70, '2': 30 } }).build();
    const one = deployedModel('one', 'ep1', { id: '1' }).build();
    const two = deployedModel('two', 'ep1', { id: '2' }).build();
    const three = deployedModel('three', 'ep1', { id: '3' }).deleting().build();
    const { status, verdict } = compute(ep, [one, two, three], undefined, {
      one: { state: 'ready', summary: 'Service "a" port 80' },
      two: { state: 'unavailable', message: 'no ready endpoint' },
    });
    expect(status.deployedModels.map((d) => [d.id, d.ready, d.reason])).toEqual([
      ['1', 'True', 'Reconciled'],
      ['2', 'False', 'BackendUnavailable'],
      ['3', 'False', 'Undeploying'],
    ]);
    // Model 2 has 30% of the split in effect but cannot be called: the endpoint says so (its calls answer 503), naming it.
    expect(verdict).toMatchObject({ status: 'False', reason: 'DeployedModelUnavailable' });
    expect(verdict.message).toContain(
      'status.trafficSplit[2]: 30% of calls go to DeployedModel "two" (id 2), which is not Ready (BackendUnavailable)',
    );
  });
});
