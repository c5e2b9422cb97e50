/**
 * Vertex's request-count autoscaling, carried out by kube-controller-manager's HPA controller: a DeployedModel
 * scaled on `aiplatform.googleapis.com/prediction/online/request_count` gets an HPA asking custom.metrics.k8s.io for
 * the DeployedModel's `prediction_requests_per_minute`; a real aggregated custom-metrics API serves it (the
 * custom-metrics-apiserver test adapter, registered through the aggregation layer), and the HPA controller scales
 * the model's Deployment by Vertex's arithmetic (requests per minute per replica). Its own control plane: an
 * APIService that outlives its server would trouble every other suite's discovery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../../support/cluster.js';
import { CustomMetricsAdapter } from '../../support/custom-metrics-adapter.js';
import {
  eventually,
  readyAndCurrent,
  startFaultCluster,
  startOperatorUnderTest,
  type FaultCluster,
  type Observed,
  type OperatorUnderTest,
} from '../faults/own-control-plane.js';

const NS = 'autoscale';
const REQUEST_COUNT = 'aiplatform.googleapis.com/prediction/online/request_count';
const MODEL_RESOURCE = 'deployedmodels.prediction.endpoint-operator.dev';

interface HpaStatus {
  desiredReplicas?: number;
  currentMetrics?: {
    type: string;
    object?: { metric: { name: string }; current: { averageValue?: string; value?: string } };
  }[];
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

function model(minReplicaCount: number): string {
  return `
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: ranker }
spec:
  endpointRef: { name: search }
  id: "7100"
  model: projects/p/locations/l/models/ranker
  containerSpec: { imageUri: registry.example/ranker:1, ports: [{ containerPort: 9000 }] }
  dedicatedResources:
    machineSpec: { machineType: n1-standard-2 }
    minReplicaCount: ${minReplicaCount}
    maxReplicaCount: 4
    autoscalingMetricSpecs: [{ metricName: ${REQUEST_COUNT}, target: 60 }]
`;
}

describe('a DeployedModel scaled on request count by the HPA controller', () => {
  let cluster: FaultCluster;
  let adapter: CustomMetricsAdapter | undefined;
  let op: OperatorUnderTest | undefined;

  const k = async (args: string[], input?: string): Promise<string> => {
    const r = await kubectl(args, {
      kubeconfig: cluster.plane.kubeconfigPath,
      ...(input !== undefined ? { input } : {}),
    });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const get = async <T>(resource: string): Promise<T> =>
    JSON.parse(await k(['get', '-n', NS, resource, '-o', 'json'])) as T;
  const hpaStatus = async (): Promise<HpaStatus> =>
    (await get<{ status?: HpaStatus }>('horizontalpodautoscalers.v2.autoscaling/dm-ranker')).status ?? {};
  const replicas = async (): Promise<number | undefined> =>
    (await get<{ spec: { replicas?: number } }>('deployment/dm-ranker')).spec.replicas;

  beforeAll(async () => {
    cluster = await startFaultCluster(NS);
    adapter = await CustomMetricsAdapter.start(cluster.plane.kubeconfigPath);
    op = await startOperatorUnderTest(cluster.plane, NS);
    await k(
      ['apply', '-n', NS, '-f', '-'],
      'apiVersion: prediction.endpoint-operator.dev/v1\nkind: PredictionEndpoint\nmetadata: { name: search }\nspec: { displayName: Search }\n',
    );
    await k(['apply', '-n', NS, '-f', '-'], model(1));
    await k(['wait', '-n', NS, '--for=condition=Ready', 'deployedmodel/ranker', '--timeout=120s']);
  }, 900_000);

  afterAll(async () => {
    await op?.stop();
    await adapter?.stop();
    await cluster?.stop();
  });

  it('makes an HPA on the object metric of the DeployedModel, which reports the metric missing until an adapter has it', async () => {
    const hpa = await get<{ spec: unknown }>('horizontalpodautoscalers.v2.autoscaling/dm-ranker');
    expect(hpa.spec).toMatchObject({
      minReplicas: 1,
      maxReplicas: 4,
      metrics: [
        {
          type: 'Object',
          object: {
            describedObject: {
              apiVersion: 'prediction.endpoint-operator.dev/v1',
              kind: 'DeployedModel',
              name: 'ranker',
            },
            metric: { name: 'prediction_requests_per_minute' },
            target: { type: 'AverageValue', averageValue: '60' },
          },
        },
      ],
    });
    // As docs/autoscaling.md says: ScalingActive False (FailedGetObjectMetric), and the replica count kept.
    const status = await eventually(
      'the HPA to report the missing metric',
      async () => {
        const s = await hpaStatus();
        return s.conditions?.some((c) => c.type === 'ScalingActive' && c.status === 'False') === true ? s : undefined;
      },
      90_000,
    );
    expect(status.conditions?.find((c) => c.type === 'ScalingActive')?.reason).toBe('FailedGetObjectMetric');
    expect(await replicas()).toBe(1);
  }, 120_000);

  it('scales the Deployment to ceil(calls per minute ÷ 60), bounded by maxReplicaCount, and the model stays Ready', async () => {
    // 150 calls per minute on one replica: 2.5 × the target, so 3 replicas.
    await adapter?.write(NS, MODEL_RESOURCE, 'ranker', 'prediction_requests_per_minute', '150');
    await eventually('3 replicas', async () => (await replicas()) === 3, 90_000);
    const status = await hpaStatus();
    expect(status.currentMetrics?.[0]?.object?.metric.name).toBe('prediction_requests_per_minute');
    expect(status.conditions?.find((c) => c.type === 'ScalingActive')?.status).toBe('True');

    // 600 per minute on 3 replicas wants 10: maxReplicaCount holds it at 4.
    await adapter?.write(NS, MODEL_RESOURCE, 'ranker', 'prediction_requests_per_minute', '600');
    await eventually('4 replicas', async () => (await replicas()) === 4, 90_000);
    await eventually(
      'the HPA to say it is held at its maximum',
      async () =>
        (await hpaStatus()).conditions?.some(
          (c) => c.type === 'ScalingLimited' && c.status === 'True' && c.reason === 'TooManyReplicas',
        ) === true,
      60_000,
    );

    // The model reports its four replicas, and is Ready for its generation.
    const dm = await eventually(
      'the model to report 4 available replicas',
      async () => {
        const o = await get<Observed>('deployedmodel/ranker');
        return o.status?.['availableReplicaCount'] === 4 && readyAndCurrent(o) ? o : undefined;
      },
      90_000,
    );
    expect(dm.status?.['replicaCount']).toBe(4);
  }, 300_000);

  it('leaves replicas to the HPA when the model is changed: a new minReplicaCount moves the HPA, not the count', async () => {
    await k(['apply', '-n', NS, '-f', '-'], model(2));
    await eventually(
      'the HPA minimum 2',
      async () =>
        (await get<{ spec: { minReplicas?: number } }>('horizontalpodautoscalers.v2.autoscaling/dm-ranker')).spec
          .minReplicas === 2,
      60_000,
    );
    await eventually(
      'the model Ready for its new generation',
      async () => readyAndCurrent(await get<Observed>('deployedmodel/ranker')),
      60_000,
    );
    expect(await replicas()).toBe(4);
  }, 120_000);
});
