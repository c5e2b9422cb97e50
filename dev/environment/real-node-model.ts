/**
 * `npm start` with the real node (the default): the examples' containerSpec model runs for real. Its image becomes Google's Vertex
 * ModelServer (dev/models/model-server-image.ts), pushed to the node's local registry; its artifactUri
 * `gs://demo-models/iris/1`, as a Vertex user writes it, which the bucket map (the examples' ModelArtifactBucket
 * `demo-models`, pointed at the local registry) sends to scikit-learn's iris classifier pushed there as an OCI
 * artifact (dev/models/iris-artifact.ts) and mounted by the kubelet as an image volume; and its machine type one
 * that the machine catalogue places on the real node (a nodeSelector and toleration). The rest of the model (its
 * Deployment, Service, HPA, PDB, probes) is the operator's as for any DeployedModel; the kubelet judges its readiness.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fetch, type Dispatcher } from 'undici';
import { isRecord, type KubeObject } from '../../src/api/common/kube-object.js';
import {
  DEFAULT_MACHINE_CATALOGUE,
  MACHINE_TYPES_KEY,
  type MachineCatalogue,
} from '../../src/api/prediction/v1/machine-catalogue.js';
import { MACHINE_TYPES_CONFIGMAP } from '../../src/deploy/machine-types.js';
import { ensureIrisModel, IRIS_INSTANCES, irisPredictions } from '../models/iris-model.js';
import { ON_REAL_NODE } from '../cluster/real-node/node-config.js';
import { publishToNodeRegistry } from '../cluster/real-node/node-images.js';
import { ensurePythonPackages } from '../models/python-packages.js';
import { ensureModelServerImage, MODEL_SERVER_IMAGE_CONTRACT } from '../models/model-server-image.js';
import { imageLogDir } from '../image/podman.js';
import {
  IRIS_BUCKET,
  irisArtifactBucket,
  irisArtifactReference,
  irisArtifactUri,
  pushIrisArtifact,
} from '../models/iris-artifact.js';
import { artifactBucketKind } from '../../src/api/prediction/v1/artifact-bucket.js';
import { CURL_GATEWAY_OPTIONS } from './demo-calls.js';

/** The server: Google's own, for Vertex custom containers (the `Vertex` protocol, the operator's default). */
const SERVER = 'vertex-sklearn';
const ROUTES = MODEL_SERVER_IMAGE_CONTRACT.routes[SERVER];

/** The machine type of the real node: small enough for a 2-core machine, placed there by the catalogue. */
export const REAL_NODE_MACHINE_TYPE = 'e2-small';

/** The built-in catalogue plus `e2-small` on the real node (its label and taint, dev/cluster/real-node/node-config.ts). */
export const REAL_NODE_CATALOGUE: MachineCatalogue = {
  ...DEFAULT_MACHINE_CATALOGUE,
  machineTypes: {
    ...DEFAULT_MACHINE_CATALOGUE.machineTypes,
    [REAL_NODE_MACHINE_TYPE]: {
      cpu: '100m',
      // The memory request is also the limit (serving-plan.ts): Google's server with scikit-learn needs about 300 MB.
      memory: '1Gi',
      nodeSelector: { ...ON_REAL_NODE.nodeSelector },
      tolerations: ON_REAL_NODE.tolerations.map((t) => ({ ...t })),
    },
  },
};

/** The catalogue as the operator reads it (`--machine-catalogue`): ConfigMap endpoint-operator-machine-types. */
export function realNodeCatalogueConfigMap(namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: MACHINE_TYPES_CONFIGMAP, namespace },
    data: { [MACHINE_TYPES_KEY]: `${JSON.stringify(REAL_NODE_CATALOGUE, null, 2)}\n` },
  };
}

export interface RealModelImage {
  /** The image in the node's registry, as a containerSpec names it. */
  readonly image: string;
  /** What scikit-learn computes here for IRIS_INSTANCES with the model baked into the image. */
  readonly expected: readonly number[];
}

/**
 * Builds the image when podman lacks it (the first time: the Python packages, the model, the image; minutes),
 * and what scikit-learn predicts with that model here. Needs no cluster: `dev` starts it beside the cluster.
 */
export async function buildRealModelImage(log: (line: string) => void): Promise<{ local: string; expected: number[] }> {
  const local = await ensureModelServerImage(SERVER, log);
  const python = await ensurePythonPackages('vertex-model-server', log);
  const expected = await irisPredictions(python, await ensureIrisModel(python), IRIS_INSTANCES);
  return { local, expected };
}

/** The artifact the real model serves: version 1 of gs://demo-models/iris, through the bucket map. */
export const REAL_MODEL_ARTIFACT = irisArtifactUri('1');

/**
 * `localhost/<name>:<tag>` as `<registry>/endpoint-operator/<name>:<tag>`, pushed (layers the registry has are
 * skipped), and the iris model as the OCI artifact REAL_MODEL_ARTIFACT names; returns the server's image.
 */
export async function pushRealModelImage(local: string): Promise<string> {
  await mkdir(imageLogDir(), { recursive: true });
  const logFile = join(imageLogDir(), 'dev-real-node-push.log');
  const python = await ensurePythonPackages('vertex-model-server');
  await pushIrisArtifact(await ensureIrisModel(python), '1', logFile);
  return publishToNodeRegistry(local, logFile);
}

function isContainerModel(obj: KubeObject): boolean {
  return obj.kind === 'DeployedModel' && isRecord(obj.spec) && isRecord(obj.spec.containerSpec);
}

function isIrisBucket(obj: KubeObject): boolean {
  return obj.kind === artifactBucketKind.kind && obj.metadata.name === IRIS_BUCKET;
}

/**
 * The examples with every containerSpec model turned into the real iris server on the real node, serving
 * REAL_MODEL_ARTIFACT, and the bucket map's entry for its bucket pointed at the local registry (added when the
 * examples lack it); every other object as it was.
 */
export function withRealModel(objects: readonly KubeObject[], image: string): KubeObject[] {
  const bucket = irisArtifactBucket();
  const mapped = objects.some(isIrisBucket) ? [] : [bucket];
  return [...mapped, ...objects].map((obj) => {
    if (isIrisBucket(obj)) return { ...obj, spec: bucket.spec };
    if (!isContainerModel(obj) || !isRecord(obj.spec)) return obj;
    const spec = obj.spec;
    const container = isRecord(spec.containerSpec) ? spec.containerSpec : {};
    const resources = isRecord(spec.dedicatedResources) ? spec.dedicatedResources : {};
    const machine = isRecord(resources.machineSpec) ? resources.machineSpec : {};
    return {
      ...obj,
      spec: {
        ...spec,
        displayName: 'iris classifier (scikit-learn) in Google Vertex ModelServer, on the real node',
        artifactUri: REAL_MODEL_ARTIFACT,
        containerSpec: {
          ...container,
          imageUri: image,
          ports: [{ containerPort: MODEL_SERVER_IMAGE_CONTRACT.port }],
          predictRoute: ROUTES.predict,
          healthRoute: ROUTES.health,
          // A Python server that imports Google's SDK starts in 10 s on a quiet machine and in over a minute on a
          // busy 2-core one: the example's startup window (3 × 10 s) would restart it forever. Probed every
          // second for up to 10 minutes, it is Ready as soon as it answers.
          startupProbe: {
            httpGet: { path: ROUTES.health },
            periodSeconds: 1,
            failureThreshold: 600,
            timeoutSeconds: 5,
          },
          healthProbe: { httpGet: { path: ROUTES.health }, periodSeconds: 2, timeoutSeconds: 5 },
        },
        dedicatedResources: { ...resources, machineSpec: { ...machine, machineType: REAL_NODE_MACHINE_TYPE } },
      },
    };
  });
}

/** The endpoint whose split sends calls to the (first) containerSpec model, and that model's name. */
export function realModelEndpoint(
  endpoints: readonly KubeObject[],
  models: readonly KubeObject[],
): { endpoint: string; model: string; url: string } | undefined {
  for (const model of models.filter(isContainerModel)) {
    const status = isRecord(model.status) ? model.status : {};
    const id = typeof status.id === 'string' ? status.id : undefined;
    for (const ep of endpoints) {
      const split = isRecord(ep.spec) && isRecord(ep.spec.trafficSplit) ? ep.spec.trafficSplit : {};
      const url = isRecord(ep.status) ? ep.status.url : undefined;
      if (id !== undefined && typeof url === 'string' && typeof split[id] === 'number' && split[id] > 0)
        return { endpoint: ep.metadata.name ?? '', model: model.metadata.name ?? '', url };
    }
  }
  return undefined;
}

export interface RealModelAnswer {
  readonly status: number;
  /** `predictions` of the answer, when it had them. */
  readonly predictions?: unknown;
}

/** The printed call, made first: IRIS_INSTANCES through the gateway to the model's pods. */
export async function callRealModel(url: string, token: string, dispatcher: Dispatcher): Promise<RealModelAnswer> {
  try {
    const res = await fetch(`${url}:predict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ instances: IRIS_INSTANCES }),
      dispatcher,
    });
    const body = (await res.json().catch(() => ({}))) as { predictions?: unknown };
    return { status: res.status, predictions: body.predictions };
  } catch {
    return { status: 0 };
  }
}

/** What `dev` prints about the real model: where it runs, the answer it gave, and the curl that repeats it. */
export function realModelLines(
  target: { endpoint: string; model: string; url: string },
  image: string,
  answer: RealModelAnswer,
  expected: readonly number[],
): string[] {
  const got = JSON.stringify(answer.predictions ?? null);
  const agrees = got === JSON.stringify(expected);
  return [
    '',
    `Real model server on the real node: DeployedModel ${target.model} (PredictionEndpoint ${target.endpoint}) runs ${image},`,
    `  Google's Vertex ModelServer serving scikit-learn's iris classifier from artifactUri ${REAL_MODEL_ARTIFACT}: the bucket`,
    `  map (kubectl get modelartifactbuckets ${IRIS_BUCKET}) sends it to the OCI artifact ${irisArtifactReference('1')},`,
    `  which the kubelet mounts as an image volume; images pulled by containerd from the local registry, readiness judged`,
    `  on ${ROUTES.health}. Its :predict answered ${answer.status} with`,
    `  predictions ${got} (scikit-learn here: ${JSON.stringify(expected)}${agrees ? ', the same' : ', NOT the same'}):`,
    `  curl -s -X POST ${target.url}:predict -H 'content-type: application/json' ${CURL_GATEWAY_OPTIONS} -d '${JSON.stringify({ instances: IRIS_INSTANCES })}'`,
  ];
}
