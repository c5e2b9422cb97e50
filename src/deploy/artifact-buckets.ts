/**
 * The bucket map as a chart value (`modelArtifactBuckets`: bucket name → ModelArtifactBucket spec), rendered as
 * one cluster-scoped ModelArtifactBucket per bucket (src/api/prediction/v1/artifact-bucket.ts). The apiserver
 * validates each as it validates one applied by hand; the operator follows them live (src/operator/shard.ts).
 */
import { artifactBucketKind } from '../api/prediction/v1/artifact-bucket.js';
import { commonLabels, type DeployValues } from './values.js';

export function artifactBucketObjects(values: DeployValues): object[] {
  return Object.entries(values.modelArtifactBuckets)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, spec]) => ({
      apiVersion: `${artifactBucketKind.group}/v1`,
      kind: artifactBucketKind.kind,
      metadata: { name, labels: commonLabels('controller') },
      spec,
    }));
}
