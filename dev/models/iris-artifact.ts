/**
 * The iris model (iris-model.ts) as an OCI artifact in the real node's local registry, where a Vertex user's
 * `gs://` URI reaches it through the bucket map: ModelArtifactBucket IRIS_BUCKET maps the bucket to the repository
 * `<registry>/IRIS_BUCKET`, so `gs://IRIS_BUCKET/iris/1` is the image volume `<registry>/IRIS_BUCKET/iris:1`
 * (docs/models.md, "The bucket map"). The artifact is an image of the model's files alone (`FROM scratch`, no
 * command): the kubelet pulls it and mounts it read-only at /mnt/models, where AIP_STORAGE_URI points the model
 * server, so the servers' images need no model of their own.
 */
import { join } from 'node:path';
import type { KubeObject } from '../../src/api/common/kube-object.js';
import { artifactBucketKind } from '../../src/api/prediction/v1/artifact-bucket.js';
import { PREDICTION_GROUP } from '../../src/api/prediction/v1/names.js';
import { REGISTRY_HOST } from '../cluster/real-node/node-config.js';
import { buildAndPush } from '../cluster/real-node/node-images.js';
import { IRIS_MODEL_NAME } from './iris-model.js';

/** The Cloud Storage bucket the demo's and the tests' `gs://` URIs name (the examples' bucket too). */
export const IRIS_BUCKET = 'demo-models';

/** The files train.py writes, each copied to the artifact's root. */
const IRIS_FILES = ['model.joblib', 'model-settings.json'] as const;

const CONTAINERFILE = `FROM scratch\nCOPY ${IRIS_FILES.join(' ')} /\n`;

/** `gs://IRIS_BUCKET/iris/<version>`: what a Vertex user writes as the version's artifactUri. */
export function irisArtifactUri(version: string): string {
  return `gs://${IRIS_BUCKET}/${IRIS_MODEL_NAME}/${version}`;
}

/** The OCI artifact `irisArtifactUri(version)` is served from: `<registry>/IRIS_BUCKET/iris:<version>`. */
export function irisArtifactReference(version: string): string {
  return `${REGISTRY_HOST}/${IRIS_BUCKET}/${IRIS_MODEL_NAME}:${version}`;
}

/** The bucket map entry sending IRIS_BUCKET to the local registry's repository of that name. */
export function irisArtifactBucket(): KubeObject {
  return {
    apiVersion: `${PREDICTION_GROUP}/v1`,
    kind: artifactBucketKind.kind,
    metadata: { name: IRIS_BUCKET },
    spec: { oci: { repository: `${REGISTRY_HOST}/${IRIS_BUCKET}` } },
  };
}

/**
 * Builds the artifact of the model in `modelDir` and pushes it as version `version` of `gs://IRIS_BUCKET/iris`
 * (the registry must be running: a real node started); returns the image reference. The registry keeps its
 * storage across runs and the node's image store starts empty, so a tag pushed again with other files is what
 * the next pod mounts.
 */
export async function pushIrisArtifact(modelDir: string, version: string, logFile: string): Promise<string> {
  const reference = irisArtifactReference(version);
  const copies = Object.fromEntries(IRIS_FILES.map((f) => [f, join(modelDir, f)]));
  await buildAndPush(reference, CONTAINERFILE, {}, logFile, copies);
  return reference;
}
