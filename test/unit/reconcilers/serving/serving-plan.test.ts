import { describe, expect, it } from 'vitest';
import type { ContainerSpec } from '../../../../src/api/prediction/v1/container-spec.js';
import type { DeployedModelSpec } from '../../../../src/api/prediction/v1/deployed-model-schema.js';
import { DEFAULT_MACHINE_CATALOGUE } from '../../../../src/api/prediction/v1/machine-catalogue.js';
import {
  aipEnv,
  DRAIN_SECONDS,
  deploymentManifest,
  hpaManifest,
  kubeProbe,
  pdbManifest,
  replicasOf,
  resolveMachine,
  servingName,
  serviceManifest,
  type ServingInput,
} from '../../../../src/reconcilers/serving/serving-plan.js';
import { contains } from '../../../../src/reconcilers/serving/serving-apply.js';
import { resolveArtifact, type BucketLookup } from '../../../../src/reconcilers/serving/artifact-volume.js';

/** The parts of the manifests the tests read. */
interface Manifest {
  replicas?: number;
  progressDeadlineSeconds?: number;
  metrics?: unknown;
  selector?: unknown;
  template: {
    spec: {
      containers: {
        env: { name: string; value: string }[];
        startupProbe?: unknown;
        lifecycle?: unknown;
        terminationMessagePolicy?: string;
      }[];
      volumes?: unknown;
    };
  };
}

type Spec = DeployedModelSpec & { containerSpec: ContainerSpec };

function input(overrides: Partial<Spec> = {}): ServingInput {
  const spec: Spec = {
    endpointRef: { name: 'churn' },
    model: 'projects/p/locations/l/models/m',
    containerSpec: { imageUri: 'img:1' },
    dedicatedResources: { machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 1 },
    ...overrides,
  };
  return {
    model: {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      metadata: { name: 'xgb', namespace: 'ns', uid: 'u-1' },
    },
    spec,
    id: '42',
  };
}

const dedicated = (d: Partial<NonNullable<Spec['dedicatedResources']>>): Partial<Spec> => ({
  dedicatedResources: { machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 1, ...d },
});

describe('the serving plan', () => {
  it('names objects dm-<name>, or a hashed short form for names a Service cannot carry', () => {
    expect(servingName('xgb')).toBe('dm-xgb');
    const long = servingName(`a.${'b'.repeat(80)}`);
    expect(long).toMatch(/^dm-a-b+-[0-9a-f]{8}$/);
    expect(long.length).toBeLessThanOrEqual(63);
    expect(servingName(`a.${'b'.repeat(80)}`)).not.toBe(servingName(`a-${'b'.repeat(80)}`));
  });

  it('defaults Vertex routes and port, and gives the container the AIP_* variables (which win over spec env)', () => {
    const env = Object.fromEntries(aipEnv(input(), undefined).map((e) => [e.name, e.value]));
    expect(env).toEqual({
      AIP_HTTP_PORT: '8080',
      AIP_HEALTH_ROUTE: '/v1/endpoints/churn/deployedModels/42',
      AIP_PREDICT_ROUTE: '/v1/endpoints/churn/deployedModels/42:predict',
      AIP_DEPLOYED_MODEL_ID: '42',
      AIP_ENDPOINT_ID: 'churn',
      AIP_MODE: 'PREDICTION',
    });
    const d = deploymentManifest(
      input({
        containerSpec: {
          imageUri: 'img',
          env: [
            { name: 'AIP_MODE', value: 'x' },
            { name: 'A', value: '1' },
          ],
        },
        artifactUri: 'pvc://store/m',
      }),
      resolved(),
      true,
      { volume: {}, mount: {}, storageUri: '/mnt/models' },
    );
    const c = (d.spec as Manifest).template.spec.containers[0]!;
    expect(c.env.filter((e) => e.name === 'AIP_MODE')).toEqual([{ name: 'AIP_MODE', value: 'PREDICTION' }]);
    expect(c.env[0]).toEqual({ name: 'A', value: '1' });
    expect(c.env).toContainEqual({ name: 'AIP_STORAGE_URI', value: '/mnt/models' });
    // A crash's last log lines become the termination message; a stopping pod serves on while gateways learn it goes.
    expect(c.terminationMessagePolicy).toBe('FallbackToLogsOnError');
    expect(c.lifecycle).toEqual({ preStop: { sleep: { seconds: DRAIN_SECONDS } } });
  });

  it('maps machine types through the catalogue, accelerators to an extended resource with selector and toleration, spot likewise; never guesses', () => {
    expect(resolveMachine(input().spec, DEFAULT_MACHINE_CATALOGUE)).toEqual({
      ok: true,
      resources: { cpu: '4', memory: '15Gi' },
      nodeSelector: {},
      tolerations: [],
    });
    const gpu = resolveMachine(
      input(
        dedicated({
          machineSpec: { machineType: 'n1-standard-4', acceleratorType: 'NVIDIA_TESLA_T4', acceleratorCount: 2 },
          spot: true,
        }),
      ).spec,
      DEFAULT_MACHINE_CATALOGUE,
    );
    expect(gpu).toEqual({
      ok: true,
      resources: { cpu: '4', memory: '15Gi', 'nvidia.com/gpu': '2' },
      nodeSelector: { 'cloud.google.com/gke-accelerator': 'nvidia-tesla-t4', 'cloud.google.com/gke-spot': 'true' },
      tolerations: [
        { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
        { key: 'cloud.google.com/gke-spot', operator: 'Equal', value: 'true', effect: 'NoSchedule' },
      ],
    });
    const unknown = resolveMachine(
      input(dedicated({ machineSpec: { machineType: 'm9-mega-1' } })).spec,
      DEFAULT_MACHINE_CATALOGUE,
    );
    expect(unknown.ok).toBe(false);
    expect(!unknown.ok && unknown.message).toMatch(
      /^spec\.dedicatedResources\.machineSpec\.machineType: machine type "m9-mega-1" is not in the machine catalogue/,
    );
    expect(
      resolveMachine(
        input({ dedicatedResources: undefined, automaticResources: { minReplicaCount: 1 } }).spec,
        DEFAULT_MACHINE_CATALOGUE,
      ),
    ).toMatchObject({ ok: true, resources: { cpu: '2', memory: '7680Mi' } });
  });

  it("places a machine type on the nodes its catalogue entry names, before its accelerator's and spot's placement", () => {
    const catalogue = {
      ...DEFAULT_MACHINE_CATALOGUE,
      machineTypes: {
        'n1-standard-4': {
          cpu: '500m',
          memory: '1Gi',
          nodeSelector: { pool: 'small' },
          tolerations: [{ key: 'pool', operator: 'Equal' as const, value: 'small', effect: 'NoSchedule' as const }],
        },
      },
    };
    expect(resolveMachine(input(dedicated({ spot: true })).spec, catalogue)).toEqual({
      ok: true,
      resources: { cpu: '500m', memory: '1Gi' },
      nodeSelector: { pool: 'small', 'cloud.google.com/gke-spot': 'true' },
      tolerations: [
        { key: 'pool', operator: 'Equal', value: 'small', effect: 'NoSchedule' },
        { key: 'cloud.google.com/gke-spot', operator: 'Equal', value: 'true', effect: 'NoSchedule' },
      ],
    });
  });

  it('sets replicas to min unless an HPA owns them, the progress deadline from deploymentTimeout, and the startup window from it', () => {
    const withCount = deploymentManifest(input(dedicated({ minReplicaCount: 3 })), resolved(), true, undefined)
      .spec as Manifest;
    expect(withCount.replicas).toBe(3);
    expect(withCount.progressDeadlineSeconds).toBe(1200);
    expect('replicas' in (deploymentManifest(input(), resolved(), false, undefined).spec as object)).toBe(false);
    const slow = deploymentManifest(
      input({ containerSpec: { imageUri: 'i', deploymentTimeout: '3600s', sharedMemorySizeMb: 512 } }),
      resolved(),
      true,
      undefined,
    ).spec as Manifest;
    expect(slow.progressDeadlineSeconds).toBe(3600);
    expect(slow.template.spec.containers[0]?.startupProbe).toEqual({
      tcpSocket: { port: 8080 },
      periodSeconds: 10,
      failureThreshold: 360,
    });
    expect(slow.template.spec.volumes).toEqual([{ name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: '512Mi' } }]);
  });

  it('serves an oci:// artifact as an image volume and a pvc:// one as a read-only claim, at AIP_STORAGE_URI; gs:// through the bucket map', () => {
    type WithVolumes = {
      template: {
        spec: { containers: { env: { name: string; value: string }[]; volumeMounts?: unknown }[]; volumes?: unknown };
      };
    };
    const buckets: BucketLookup = (b) =>
      b === 'demo-models' ? { oci: { repository: 'registry.local:5000/demo' } } : undefined;
    const plan = (artifactUri: string) => {
      const artifact = resolveArtifact(artifactUri, buckets);
      if (!artifact.ok) throw new Error(artifact.message);
      return deploymentManifest(input({ artifactUri }), resolved(), true, artifact.mount).spec as WithVolumes;
    };
    const oci = plan('oci://registry.local:5000/models/iris:1').template.spec;
    expect(oci.volumes).toEqual([
      { name: 'model-artifact', image: { reference: 'registry.local:5000/models/iris:1', pullPolicy: 'IfNotPresent' } },
    ]);
    expect(oci.containers[0]?.volumeMounts).toEqual([
      { name: 'model-artifact', mountPath: '/mnt/models', readOnly: true },
    ]);
    expect(oci.containers[0]?.env).toContainEqual({ name: 'AIP_STORAGE_URI', value: '/mnt/models' });
    const pvc = plan('pvc://model-store/iris/1').template.spec;
    expect(pvc.volumes).toEqual([
      { name: 'model-artifact', persistentVolumeClaim: { claimName: 'model-store', readOnly: true } },
    ]);
    expect(pvc.containers[0]?.volumeMounts).toEqual([
      { name: 'model-artifact', mountPath: '/mnt/models', readOnly: true, subPath: 'iris/1' },
    ]);
    const gs = plan('gs://demo-models/iris/1').template.spec;
    expect(gs.volumes).toEqual([
      { name: 'model-artifact', image: { reference: 'registry.local:5000/demo/iris:1', pullPolicy: 'IfNotPresent' } },
    ]);
    expect(gs.containers[0]?.env).toContainEqual({ name: 'AIP_STORAGE_URI', value: '/mnt/models' });
  });

  it('maps Vertex probes 1:1, probing the container port when the handler names none', () => {
    expect(kubeProbe({ httpGet: { path: '/h' }, periodSeconds: 5, failureThreshold: 2 }, 9000)).toEqual({
      httpGet: { path: '/h', port: 9000 },
      periodSeconds: 5,
      failureThreshold: 2,
    });
    expect(kubeProbe({ exec: { command: ['true'] } }, 1)).toEqual({ exec: { command: ['true'] } });
    expect(kubeProbe({ grpc: { service: 's' } }, 7)).toEqual({ grpc: { service: 's', port: 7 } });
  });

  it('makes an HPA only when max > min, with Vertex metrics (CPU 60 by default); a PDB maxUnavailable 1 only when min ≥ 2', () => {
    expect(hpaManifest(input(dedicated({ minReplicaCount: 2, maxReplicaCount: 2 })))).toBeUndefined();
    expect(
      (hpaManifest(input(dedicated({ minReplicaCount: 1, maxReplicaCount: 4 })))?.spec as Manifest).metrics,
    ).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
    ]);
    const many = hpaManifest(
      input(
        dedicated({
          maxReplicaCount: 2,
          autoscalingMetricSpecs: [
            { metricName: 'aiplatform.googleapis.com/prediction/online/accelerator/duty_cycle', target: 80 },
            { metricName: 'aiplatform.googleapis.com/prediction/online/request_count', target: 100 },
          ],
        }),
      ),
    );
    expect((many?.spec as Manifest).metrics).toEqual([
      {
        type: 'Pods',
        pods: { metric: { name: 'accelerator_duty_cycle' }, target: { type: 'AverageValue', averageValue: '80' } },
      },
      // Requests per minute per replica: a metric of the DeployedModel that the HPA divides by the replica count.
      {
        type: 'Object',
        object: {
          describedObject: { apiVersion: 'prediction.endpoint-operator.dev/v1', kind: 'DeployedModel', name: 'xgb' },
          metric: { name: 'prediction_requests_per_minute' },
          target: { type: 'AverageValue', averageValue: '100' },
        },
      },
    ]);
    // Vertex's default with accelerators: CPU and the accelerator's duty cycle, both at 60.
    const gpu = hpaManifest(
      input(
        dedicated({
          maxReplicaCount: 3,
          machineSpec: { machineType: 'n1-standard-4', acceleratorType: 'NVIDIA_TESLA_T4', acceleratorCount: 1 },
        }),
      ),
    );
    expect((gpu?.spec as Manifest).metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      {
        type: 'Pods',
        pods: { metric: { name: 'accelerator_duty_cycle' }, target: { type: 'AverageValue', averageValue: '60' } },
      },
    ]);
    expect(pdbManifest(input())).toBeUndefined();
    expect(pdbManifest(input(dedicated({ minReplicaCount: 2 })))?.spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: { 'prediction.endpoint-operator.dev/deployed-model-uid': 'u-1' } },
    });
    expect(replicasOf(input(dedicated({ minReplicaCount: 3, requiredReplicaCount: 2 })).spec)).toEqual({
      min: 3,
      max: 3,
      required: 2,
    });
  });

  it('owns every object by the model and selects its pods by uid', () => {
    for (const o of [deploymentManifest(input(), resolved(), true, undefined), serviceManifest(input())]) {
      expect(o.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'prediction.endpoint-operator.dev/v1',
          kind: 'DeployedModel',
          name: 'xgb',
          uid: 'u-1',
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    expect((serviceManifest(input()).spec as Manifest).selector).toEqual({
      'prediction.endpoint-operator.dev/deployed-model-uid': 'u-1',
    });
  });

  it('contains(): a live object with server defaults still contains what was applied; a changed value does not', () => {
    const want = { spec: { replicas: 2, template: { containers: [{ name: 'a', ports: [{ containerPort: 1 }] }] } } };
    expect(
      contains(
        {
          spec: {
            replicas: 2,
            paused: false,
            template: {
              containers: [{ name: 'a', imagePullPolicy: 'Always', ports: [{ containerPort: 1, protocol: 'TCP' }] }],
            },
          },
        },
        want,
      ),
    ).toBe(true);
    expect(
      contains(
        { spec: { replicas: 3, template: { containers: [{ name: 'a', ports: [{ containerPort: 1 }] }] } } },
        want,
      ),
    ).toBe(false);
    expect(contains({ spec: { replicas: 2, template: { containers: [] } } }, want)).toBe(false);
  });
});

function resolved(): Extract<ReturnType<typeof resolveMachine>, { ok: true }> {
  return { ok: true, resources: { cpu: '4', memory: '15Gi' }, nodeSelector: {}, tolerations: [] };
}
