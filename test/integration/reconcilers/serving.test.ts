/**
 * DeployedModel spec.containerSpec on the real control plane: the operator creates the Deployment,
 * Service, HPA and PDB; kube-controller-manager's Deployment/ReplicaSet controllers make pods, the
 * real scheduler places them on kwok's simulated nodes, kwok marks them Ready (no container runs);
 * garbage collection removes the objects with the model. No status is written by the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { kstatus } from '../../support/kstatus.js';
import { apply, eventually, getJson, readyOf, runOperatorWithCrds, type TestOperator } from './harness.js';

interface PodSpec {
  containers: {
    image: string;
    ports: unknown;
    env: { name: string; value: string }[];
    resources: { requests?: Record<string, string>; limits: Record<string, string> };
    readinessProbe: unknown;
    livenessProbe: unknown;
    startupProbe: unknown;
  }[];
  nodeSelector?: Record<string, string>;
}
interface DeploymentSpec {
  replicas?: number;
  progressDeadlineSeconds?: number;
  template: { spec: PodSpec };
}

const CPU = 'aiplatform.googleapis.com/prediction/online/cpu/utilization';

function model(name: string, id: string, resources: string, extra = '', endpoint = 'serving'): string {
  return `
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: ${name} }
spec:
  endpointRef: { name: ${endpoint} }
  id: "${id}"
  model: projects/p/locations/l/models/${name}
  artifactUri: oci://registry.example/models/${name}:1
  containerSpec:
    imageUri: registry.example/server:1
    ports: [{ containerPort: 9000 }]
    predictRoute: /predict
    healthRoute: /health
    deploymentTimeout: 600s
    env: [{ name: LOG_LEVEL, value: debug }, { name: AIP_MODE, value: ignored }]
${extra}
${resources}
`;
}

async function conditionsOf(
  ns: string,
  resource: string,
): Promise<Record<string, { status?: string; reason?: string; message?: string }>> {
  const obj = await getJson(ns, resource);
  const list = (obj.status?.conditions ?? []) as { type: string; status?: string; reason?: string; message?: string }[];
  return Object.fromEntries(list.map((c) => [c.type, c]));
}

async function exists(ns: string, resource: string): Promise<boolean> {
  const r = await kubectl(['get', '-n', ns, resource, '-o', 'name', '--ignore-not-found']);
  return r.stdout.trim() !== '';
}

describe('DeployedModel containerSpec', () => {
  let ns: string;
  let op: TestOperator;

  beforeAll(async () => {
    ns = await createTestNamespace('serving');
    op = await runOperatorWithCrds(ns);
    await apply(
      ns,
      'apiVersion: prediction.endpoint-operator.dev/v1\nkind: PredictionEndpoint\nmetadata: { name: serving }\nspec: { displayName: Serving }\n',
    );
  });

  afterAll(async () => {
    // Namespaces are never deleted in this cluster: free the simulated nodes for the other suites.
    await kubectl(['delete', '-n', ns, 'deployedmodels', '--all', '--wait=false']);
    await kubectl(['delete', '-n', ns, 'deployments', '--all', '--wait=false']);
    await op?.stop();
  });

  it('creates the Deployment, Service, HPA and PDB as specified, owned by the model; Ready once pods are; gone with the model', async () => {
    await apply(
      ns,
      model(
        'churn',
        '5100',
        `  dedicatedResources:
    machineSpec: { machineType: n1-standard-2 }
    minReplicaCount: 2
    maxReplicaCount: 3
    autoscalingMetricSpecs: [{ metricName: ${CPU}, target: 70 }]`,
      ),
    );
    const dm = await getJson(ns, 'deployedmodel/churn');
    const owner = {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'DeployedModel',
      name: 'churn',
      uid: dm.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    };
    const deployment = await eventually('the Deployment', async () =>
      (await exists(ns, 'deployment/dm-churn')) ? getJson(ns, 'deployment/dm-churn') : undefined,
    );
    expect(deployment.metadata.ownerReferences).toEqual([owner]);
    const spec = deployment.spec as DeploymentSpec;
    expect(spec.replicas).toBe(2);
    expect(spec.progressDeadlineSeconds).toBe(600);
    const container = spec.template.spec.containers[0]!;
    expect(container.image).toBe('registry.example/server:1');
    expect(container.ports).toEqual([{ name: 'http', containerPort: 9000, protocol: 'TCP' }]);
    expect(container.resources).toEqual({ requests: { cpu: '2', memory: '7680Mi' }, limits: { memory: '7680Mi' } });
    expect(Object.fromEntries(container.env.map((e) => [e.name, e.value]))).toEqual({
      LOG_LEVEL: 'debug',
      AIP_HTTP_PORT: '9000',
      AIP_HEALTH_ROUTE: '/health',
      AIP_PREDICT_ROUTE: '/predict',
      AIP_DEPLOYED_MODEL_ID: '5100',
      AIP_ENDPOINT_ID: 'serving',
      AIP_MODE: 'PREDICTION',
      AIP_STORAGE_URI: '/mnt/models',
    });
    expect(container.readinessProbe).toMatchObject({ httpGet: { path: '/health', port: 9000 } });
    expect(container.livenessProbe).toMatchObject({ tcpSocket: { port: 9000 } });
    expect(container.startupProbe).toMatchObject({
      tcpSocket: { port: 9000 },
      periodSeconds: 10,
      failureThreshold: 60,
    });

    const service = await getJson(ns, 'service/dm-churn');
    expect(service.metadata.ownerReferences).toEqual([owner]);
    expect((service.spec as { ports?: unknown }).ports).toEqual([
      { name: 'http', port: 9000, targetPort: 'http', protocol: 'TCP' },
    ]);
    const hpa = await eventually('the HPA', async () =>
      (await exists(ns, 'hpa/dm-churn')) ? getJson(ns, 'horizontalpodautoscalers.v2.autoscaling/dm-churn') : undefined,
    );
    expect(hpa.metadata.ownerReferences).toEqual([owner]);
    expect(hpa.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'dm-churn' },
      minReplicas: 2,
      maxReplicas: 3,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ],
    });
    const pdb = await eventually('the PDB', async () =>
      (await exists(ns, 'pdb/dm-churn')) ? getJson(ns, 'pdb/dm-churn') : undefined,
    );
    expect(pdb.metadata.ownerReferences).toEqual([owner]);
    expect((pdb.spec as { maxUnavailable?: unknown }).maxUnavailable).toBe(1);

    // kwok makes the scheduled pods Ready; the model then is, and its endpoint lists it Ready.
    const ready = await eventually(
      'the model Ready',
      async () => {
        const r = readyOf(await getJson(ns, 'deployedmodel/churn'));
        return r?.status === 'True' ? r : undefined;
      },
      60_000,
    );
    expect(ready.message).toContain('2 of 2 replica(s) of Deployment "dm-churn" available (2 required)');
    const status = (await getJson(ns, 'deployedmodel/churn')).status ?? {};
    expect(status).toMatchObject({
      replicaCount: 2,
      availableReplicaCount: 2,
      deploymentStage: 'FINISHING_UP',
      serving: {
        deployment: 'dm-churn',
        service: 'dm-churn',
        horizontalPodAutoscaler: 'dm-churn',
        podDisruptionBudget: 'dm-churn',
      },
    });
    await eventually('the endpoint lists the model Ready', async () => {
      const models = (await getJson(ns, 'predictionendpoint/serving')).status?.deployedModels as
        { id: string; ready?: string }[] | undefined;
      return models?.some((m) => m.id === '5100' && m.ready === 'True');
    });

    // A new version is a new DeployedModel: the container may not change in place.
    const refused = await kubectl([
      'patch',
      '-n',
      ns,
      'deployedmodel/churn',
      '--type=merge',
      '-p',
      '{"spec":{"containerSpec":{"imageUri":"registry.example/server:2"}}}',
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('spec.containerSpec');
    expect(refused.stderr).toContain('to roll out a new version, create a new DeployedModel');

    const deleted = await kubectl(['delete', '-n', ns, 'deployedmodel/churn', '--timeout=60s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    for (const r of ['deployment/dm-churn', 'service/dm-churn', 'hpa/dm-churn', 'pdb/dm-churn']) {
      await eventually(`${r} removed by garbage collection`, async () => !(await exists(ns, r)), 60_000);
    }
  });

  it('scales minReplicaCount 2 → 3 in place', async () => {
    const resources = (min: number) =>
      `  dedicatedResources:\n    machineSpec: { machineType: n1-standard-2 }\n    minReplicaCount: ${min}`;
    await apply(ns, model('scaled', '5200', resources(2)));
    const first = await eventually('2 replicas', async () => {
      const d = (await exists(ns, 'deployment/dm-scaled')) ? await getJson(ns, 'deployment/dm-scaled') : undefined;
      return (d?.spec as Record<string, unknown> | undefined)?.replicas === 2 ? d : undefined;
    });
    expect(await exists(ns, 'hpa/dm-scaled')).toBe(false);
    await apply(ns, model('scaled', '5200', resources(3)));
    const scaled = await eventually('3 replicas', async () => {
      const d = await getJson(ns, 'deployment/dm-scaled');
      return (d.spec as Record<string, unknown>).replicas === 3 ? d : undefined;
    });
    expect(scaled.metadata.uid).toBe(first.metadata.uid);
    await eventually(
      'the model Ready with 3 available',
      async () => {
        const obj = await getJson(ns, 'deployedmodel/scaled');
        return (
          readyOf(obj)?.status === 'True' &&
          obj.status?.availableReplicaCount === 3 &&
          readyOf(obj)?.observedGeneration === obj.metadata.generation
        );
      },
      60_000,
    );
    await kubectl(['delete', '-n', ns, 'deployedmodel/scaled', '--wait=false']);
  });

  it('is Stalled, Unschedulable, when no node has the accelerator; MachineTypeUnknown for a machine the catalogue lacks', async () => {
    await apply(
      ns,
      model(
        'gpu',
        '5300',
        `  dedicatedResources:
    machineSpec: { machineType: n1-standard-2, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 1 }
    minReplicaCount: 1`,
      ),
    );
    const stalled = await eventually(
      'Stalled Unschedulable',
      async () => {
        const c = await conditionsOf(ns, 'deployedmodel/gpu');
        return c.Stalled?.status === 'True' ? c : undefined;
      },
      60_000,
    );
    expect(stalled.Ready).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    expect(stalled.Stalled?.message).toMatch(/cannot be scheduled: 0\/\d+ nodes are available/);
    // What a GitOps wait reads: kstatus itself says Failed, so Flux's wait and kpt stop waiting at once.
    expect(await kstatus(await getJson(ns, 'deployedmodel/gpu'))).toMatchObject({ status: 'Failed' });
    const wait = await kubectl(['wait', '-n', ns, '--for=condition=Ready', '--timeout=2s', 'deployedmodel/gpu']);
    expect(wait.code).not.toBe(0);
    const d = await getJson(ns, 'deployment/dm-gpu');
    const pod = (d.spec as DeploymentSpec).template.spec;
    expect(pod.containers[0]?.resources.limits['nvidia.com/gpu']).toBe('1');
    expect(pod.nodeSelector).toEqual({ 'cloud.google.com/gke-accelerator': 'nvidia-tesla-t4' });

    await apply(
      ns,
      model(
        'odd',
        '5400',
        '  dedicatedResources:\n    machineSpec: { machineType: n1-ultramem-40 }\n    minReplicaCount: 1',
      ),
    );
    const unknown = await eventually('Stalled MachineTypeUnknown', async () => {
      const c = await conditionsOf(ns, 'deployedmodel/odd');
      return c.Stalled?.reason === 'MachineTypeUnknown' ? c : undefined;
    });
    expect(unknown.Ready?.message).toContain('machine type "n1-ultramem-40" is not in the machine catalogue');
    expect(await exists(ns, 'deployment/dm-odd')).toBe(false);
    await kubectl(['delete', '-n', ns, 'deployedmodel/gpu', 'deployedmodel/odd', '--wait=false']);
  }, 600_000); // kstatus is built from the Go module proxy on its first use

  it('switches blue/green traffic only once the new model is deployed: status.trafficSplit keeps the old split meanwhile', async () => {
    const small = '  dedicatedResources:\n    machineSpec: { machineType: n1-standard-2 }\n    minReplicaCount: 1';
    const endpoint = (split: string): string =>
      `apiVersion: prediction.endpoint-operator.dev/v1\nkind: PredictionEndpoint\nmetadata: { name: bg }\nspec: { displayName: BlueGreen, trafficSplit: ${split} }\n`;
    await apply(ns, endpoint('{ "6100": 100 }') + '---' + model('blue', '6100', small, '', 'bg'));
    await eventually(
      'blue in effect',
      async () => {
        const ep = await getJson(ns, 'predictionendpoint/bg');
        return readyOf(ep)?.status === 'True' && JSON.stringify(ep.status?.trafficSplit) === '{"6100":100}';
      },
      60_000,
    );

    // green cannot be scheduled (no node has the accelerator): the switch waits, blue keeps serving.
    const gpu =
      '  dedicatedResources:\n    machineSpec: { machineType: n1-standard-2, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 1 }\n    minReplicaCount: 1';
    await apply(ns, model('green', '6200', gpu, '', 'bg') + '---\n' + endpoint('{ "6100": 0, "6200": 100 }'));
    const pending = await eventually(
      'TrafficSplitPending',
      async () => {
        const ep = await getJson(ns, 'predictionendpoint/bg');
        const r = readyOf(ep);
        return r?.reason === 'TrafficSplitPending' && r.observedGeneration === ep.metadata.generation ? ep : undefined;
      },
      60_000,
    );
    expect(pending.status?.trafficSplit).toEqual({ '6100': 100 });
    expect(readyOf(pending)?.message).toContain(
      'spec.trafficSplit[6200]: waits until the model(s) it gives traffic are deployed (Ready)',
    );
    // A wait on the stuck model ends at once under kstatus: Stalled, not "still progressing".
    const stalled = await eventually(
      'green Stalled',
      async () => (await conditionsOf(ns, 'deployedmodel/green')).Stalled?.reason === 'Unschedulable',
      60_000,
    );
    expect(stalled).toBe(true);

    // A deployable green: the split moves once its replica is available.
    await apply(ns, model('green2', '6300', small, '', 'bg') + '---\n' + endpoint('{ "6100": 0, "6300": 100 }'));
    const moved = await eventually(
      'green2 in effect',
      async () => {
        const ep = await getJson(ns, 'predictionendpoint/bg');
        return readyOf(ep)?.status === 'True' &&
          (ep.status?.trafficSplit as Record<string, number> | undefined)?.['6300'] === 100
          ? ep
          : undefined;
      },
      60_000,
    );
    expect(moved.status?.trafficSplit).toEqual({ '6100': 0, '6300': 100 });
    const green2 = readyOf(await getJson(ns, 'deployedmodel/green2'));
    expect(green2?.status).toBe('True');
    await kubectl(['delete', '-n', ns, 'deployedmodel/green', '--wait=false']);
  });
});
