export { predictionEndpointKind, deployedModelKind, modelKind } from './kinds.js';
export { artifactBucketKind, type ArtifactBucketSpec } from './artifact-bucket.js';
export {
  predictionEndpointSpecSchema,
  predictionEndpointStatusSchema,
  deployedModelSummarySchema,
  type PredictionEndpointSpec,
  type PredictionEndpointStatus,
  type DeployedModelSummary,
} from './endpoint-schema.js';
export {
  deployedModelSpecSchema,
  deployedModelStatusSchema,
  type DeployedModelSpec,
  type DeployedModelStatus,
} from './deployed-model-schema.js';
export { validatePredictionEndpoint } from './endpoint-validation.js';
export { validateDeployedModel } from './deployed-model-validation.js';
export { computeEtag, canonicalJson, jsonEqual } from './etag.js';
export { trafficSplitProblems, compareIds } from './traffic.js';
export { endpointResourceName, PREDICTION_GROUP } from './names.js';
