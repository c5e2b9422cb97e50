/**
 * The objects test/integration/deploy/chart-on-real-node.test.ts applies beside the examples: an endpoint splitting
 * its calls between two DeployedModels that run Google's Vertex model server (the vertex-sklearn image,
 * dev/models/model-server-image.ts) on the real node with the iris model, and a caller of the gateway.
 */
import { ensureIrisModel, IRIS_INSTANCES, irisPredictions } from '../../../dev/models/iris-model.js';
import { ensurePythonPackages } from '../../../dev/models/python-packages.js';
import { MODEL_SERVER_IMAGE_CONTRACT } from '../../../dev/models/model-server-image.js';
import { REAL_NODE_MACHINE_TYPE } from '../../support/real-node.js';

export interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string; containers: { name: string; image: string }[] };
  status: {
    podIP?: string;
    containerStatuses?: { name: string; restartCount: number; lastState?: unknown }[];
  };
}

type Condition = { type: string; status: string; reason?: string; message?: string };
export function readyOf(o: { kind: string; metadata: { name: string }; status?: unknown }): Condition | undefined {
  return ((o.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
}

/** What scikit-learn computes locally for IRIS_INSTANCES with the model the image serves. */
export async function expectedIris(): Promise<number[]> {
  const python = await ensurePythonPackages('vertex-model-server');
  return irisPredictions(python, await ensureIrisModel(python), IRIS_INSTANCES);
}

const SPLIT = { '7001': 70, '7002': 30 } as const;

/** PredictionEndpoint `iris` and its two DeployedModels, one replica each of `image` on the real node's machine type. */
export function irisModels(image: string, namespace: string): object[] {
  const c = MODEL_SERVER_IMAGE_CONTRACT;
  const routes = c.routes['vertex-sklearn'];
  const model = (id: string, name: string): object => ({
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'DeployedModel',
    metadata: { name, namespace },
    spec: {
      endpointRef: { name: 'iris' },
      id,
      model: `projects/iris-ml/locations/europe-west4/models/${name}`,
      artifactUri: c.modelDir,
      containerSpec: {
        imageUri: image,
        ports: [{ containerPort: c.port }],
        predictRoute: routes.predict,
        healthRoute: routes.health,
      },
      dedicatedResources: { machineSpec: { machineType: REAL_NODE_MACHINE_TYPE }, minReplicaCount: 1, maxReplicaCount: 1 },
    },
  });
  return [
    {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'PredictionEndpoint',
      metadata: { name: 'iris', namespace },
      spec: { displayName: 'Iris', trafficSplit: SPLIT },
    },
    model('7001', 'iris-a'),
    model('7002', 'iris-b'),
  ];
}

/**
 * Two callers of the gateway with the rights issue 22's authorization checks: `chart-test-caller`, and
 * `chart-test-load` for a load beside it (the gateway bounds each caller's calls in flight on its own), which also
 * reads the gateway pods' /metrics as a scraper does (the chart's `endpoint-operator-metrics-reader`).
 */
export const CALLER_RBAC = (namespace: string): string => `apiVersion: v1
kind: ServiceAccount
metadata: {name: chart-test-caller, namespace: ${namespace}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: chart-test-load, namespace: ${namespace}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: chart-test-gateway-caller}
rules:
  - {apiGroups: [prediction.endpoint-operator.dev], resources: [predictionendpoints], verbs: [predict, explain]}
  - {apiGroups: [registry.endpoint-operator.dev], resources: [registryservices], verbs: [resolve, get]}
  - {apiGroups: [registry.endpoint-operator.dev], resources: [registryendpoints], verbs: [list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: chart-test-gateway-caller}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: chart-test-gateway-caller}
subjects:
  - {kind: ServiceAccount, name: chart-test-caller, namespace: ${namespace}}
  - {kind: ServiceAccount, name: chart-test-load, namespace: ${namespace}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: chart-test-metrics-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: endpoint-operator-metrics-reader}
subjects: [{kind: ServiceAccount, name: chart-test-load, namespace: ${namespace}}]
`;
