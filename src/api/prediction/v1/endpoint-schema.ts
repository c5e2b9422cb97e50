import { z } from 'zod';
import { conditionsSchema } from '../../common/conditions.js';
import { celPattern, everyKey, quoted, validations } from '../../crd/cel.js';
import {
  BQ_URI,
  BQ_URI_MAX_LENGTH,
  BQ_URI_PREFIX,
  DEPLOYED_MODEL_ID,
  KMS_KEY_NAME,
  LABEL_KEY,
  LABEL_MAX_CODE_POINTS,
  LABEL_VALUE,
  MAX_LABELS,
  MAX_TRAFFIC_SPLIT_ENTRIES,
  NETWORK,
  networkNameDetail,
} from './names.js';

/**
 * PredictionEndpoint v1: the declarative form of a Vertex AI Endpoint
 * (google.cloud.aiplatform.v1.Endpoint), with output-only fields moved to status.
 *
 * Lengths counted in code points (displayName, labels) are put in the CRD as `maxLength` through
 * `.meta()` rather than zod's `.max()`: the apiserver counts runes, zod counts UTF-16 units, so a
 * zod `.max(128)` would refuse 128 emoji that Kubernetes accepts. The validator counts code points.
 */

export const DISPLAY_NAME_MAX_CODE_POINTS = 128;

export const encryptionSpecSchema = z.object({
  kmsKeyName: z
    .string()
    .regex(KMS_KEY_NAME, {
      error:
        'must be a Cloud KMS key name: projects/{project}/locations/{location}/keyRings/{keyRing}/cryptoKeys/{key}',
    })
    .meta({
      description:
        'kmsKeyName is the Cloud KMS key that protects the endpoint, projects/*/locations/*/keyRings/*/cryptoKeys/*; required.',
    }),
});

export const bigQueryDestinationSchema = z.object({
  outputUri: z
    .string()
    .regex(BQ_URI_PREFIX, {
      error: 'must be a BigQuery URI: bq://project, bq://project.dataset or bq://project.dataset.table',
    })
    .meta({
      description:
        'outputUri is the BigQuery table or dataset that receives the logs, bq://project[.dataset[.table]]; required.',
      maxLength: BQ_URI_MAX_LENGTH,
      ...validations({
        rule: `self.matches(${celPattern(BQ_URI)})`,
        message:
          'must be bq://project, bq://project.dataset or bq://project.dataset.table with a BigQuery project id (6-30 lowercase letters, digits and hyphens, a letter first), a dataset of letters, digits and underscores and a table id of letters, marks, numbers, connectors, dashes and spaces',
      }),
    }),
});

export const loggingConfigSchema = z.object({
  enabled: z
    .boolean()
    .optional()
    .meta({ description: 'enabled turns request-response logging on; optional (default false).' }),
  samplingRate: z
    .number()
    .gt(0, { error: 'must be greater than 0 and at most 1' })
    .lte(1, { error: 'must be greater than 0 and at most 1' })
    .optional()
    .meta({ description: 'samplingRate is the fraction of requests that are logged, in (0, 1]; optional.' }),
  bigqueryDestination: bigQueryDestinationSchema
    .optional()
    .meta({ description: 'bigqueryDestination is where logged requests and responses are written; optional.' }),
});

/** `spec.labels` of a kind with Google Cloud labels (PredictionEndpoint, Model). */
export function labelsSchema(what: string) {
  return z
    .record(
      z.string(),
      z
        .string()
        .regex(LABEL_VALUE, {
          error:
            'label values may contain only lowercase letters (international allowed), numeric characters, underscores and dashes',
        })
        .meta({ maxLength: LABEL_MAX_CODE_POINTS }),
    )
    .optional()
    .meta({
      description: `labels organise ${what}: at most 64, keys and values at most 64 characters of lowercase letters (international allowed), digits, underscores and dashes, keys starting with a letter; optional.`,
      maxProperties: MAX_LABELS,
      ...validations(
        everyKey(
          `size(k) <= ${LABEL_MAX_CODE_POINTS} && k.matches(${celPattern(LABEL_KEY)})`,
          `label keys are 1 to ${LABEL_MAX_CODE_POINTS} code points, start with a lowercase letter (international allowed) and contain only lowercase letters, numeric characters, underscores and dashes`,
        ),
      ),
    });
}

export const predictionEndpointSpecSchema = z
  .object({
    displayName: z.string().meta({
      description:
        'displayName is the human-readable name of the endpoint, any UTF-8, at most 128 characters (code points); required.',
      minLength: 1,
      maxLength: DISPLAY_NAME_MAX_CODE_POINTS,
    }),
    description: z.string().optional().meta({ description: 'description of the endpoint; optional.' }),
    trafficSplit: z
      .record(z.string(), z.number().int({ error: 'must be an integer percentage' }).min(0).max(100))
      .optional()
      .meta({
        description:
          'trafficSplit maps a deployed-model id to the percentage of traffic it receives; values sum to 100, or the map is empty and the endpoint accepts no traffic; an id absent from the map gets no traffic; optional.',
        maxProperties: MAX_TRAFFIC_SPLIT_ENTRIES,
        // Atomic under server-side apply: one manager owns the whole split. A split is one decision (it sums to
        // 100), and with per-key ownership an apply meaning "exactly this split" could not remove a key another
        // manager owns; atomic, a split Argo CD or Flux applied is a clean conflict for any other writer.
        'x-kubernetes-map-type': 'atomic',
        ...validations(
          everyKey(`k.matches(${celPattern(DEPLOYED_MODEL_ID)})`, 'keys must be deployed-model ids: 1 to 10 digits'),
          {
            rule: 'size(self) == 0 || self.map(k, self[k]).sum() == 100',
            message: 'percentages must sum to exactly 100; leave the map empty for an endpoint that accepts no traffic',
          },
        ),
      }),
    etag: z.string().optional().meta({
      description:
        'etag, when set on an update, must equal status.etag of the object being replaced (a consistent read-modify-write); unset means a blind overwrite; optional.',
    }),
    labels: labelsSchema('endpoints'),
    encryptionSpec: encryptionSpecSchema
      .optional()
      .meta({ description: 'encryptionSpec is the customer-managed encryption key of the endpoint; optional.' }),
    network: z
      .string()
      .regex(NETWORK, { error: (issue) => networkNameDetail(issue.input) })
      .optional()
      .meta({
        description:
          'network is the VPC network peered with the endpoint, projects/{project number}/global/networks/{name}; mutually exclusive with enablePrivateServiceConnect; optional.',
      }),
    enablePrivateServiceConnect: z.boolean().optional().meta({
      description:
        'enablePrivateServiceConnect exposes the endpoint through Private Service Connect; deprecated, use network; mutually exclusive with network; optional.',
    }),
    predictRequestResponseLoggingConfig: loggingConfigSchema.optional().meta({
      description: 'predictRequestResponseLoggingConfig logs prediction requests and responses to BigQuery; optional.',
    }),
  })
  .meta(
    validations({
      rule: "!(has(self.network) && self.network != '' && has(self.enablePrivateServiceConnect) && self.enablePrivateServiceConnect)",
      message:
        'may not be true when spec.network is set: a VPC network and Private Service Connect are mutually exclusive',
      messageExpression: `'may not be true when spec.network is set (' + ${quoted('self.network')} + '): a VPC network and Private Service Connect are mutually exclusive'`,
      fieldPath: '.enablePrivateServiceConnect',
      reason: 'FieldValueForbidden',
    }),
  );

export type PredictionEndpointSpec = z.infer<typeof predictionEndpointSpecSchema>;

const replicaCount = z.number().int().min(1);

/** The resources of a deployed model as the endpoint reports them. */
export const deployedModelSummarySchema = z.object({
  id: z.string().meta({ description: 'id of the deployed model within the endpoint; required.' }),
  model: z.string().meta({ description: 'model is the resource name of the Model that is deployed; required.' }),
  displayName: z.string().optional().meta({ description: 'displayName of the deployed model; optional.' }),
  createTime: z
    .string()
    .optional()
    .meta({ description: 'createTime is when the model was deployed, RFC 3339; optional.', format: 'date-time' }),
  deployedModelRef: z
    .string()
    .optional()
    .meta({ description: 'deployedModelRef is the metadata.name of the DeployedModel resource; optional.' }),
  dedicatedResources: z
    .object({
      machineType: z.string().optional().meta({ description: 'machineType of each replica; optional.' }),
      minReplicaCount: replicaCount
        .optional()
        .meta({ description: 'minReplicaCount is the minimum number of replicas; optional.' }),
      maxReplicaCount: replicaCount
        .optional()
        .meta({ description: 'maxReplicaCount is the maximum number of replicas; optional.' }),
    })
    .optional()
    .meta({ description: 'dedicatedResources, when the model runs on dedicated machines; optional.' }),
  automaticResources: z
    .object({
      minReplicaCount: replicaCount
        .optional()
        .meta({ description: 'minReplicaCount is the minimum number of replicas; optional.' }),
      maxReplicaCount: replicaCount
        .optional()
        .meta({ description: 'maxReplicaCount is the maximum number of replicas; optional.' }),
    })
    .optional()
    .meta({ description: 'automaticResources, when the model runs on automatically managed resources; optional.' }),
  ready: z.enum(['True', 'False', 'Unknown']).optional().meta({
    description:
      "ready is the status of the DeployedModel's Ready condition: whether calls routed to it can be answered; optional.",
  }),
  reason: z.string().optional().meta({
    description:
      "reason is the reason of the DeployedModel's Ready condition, for example BackendUnavailable; optional.",
  }),
});

export type DeployedModelSummary = z.infer<typeof deployedModelSummarySchema>;

export const predictionEndpointStatusSchema = z.object({
  name: z.string().optional().meta({
    description:
      "name is the resource name, projects/{project}/locations/{location}/endpoints/{metadata.name}, unique in the cluster (the project is the namespace, or the operator's --project template); optional.",
  }),
  url: z.string().optional().meta({
    description:
      'url is the address to call: the gateway base URL and /v1/{name}; append :predict, :explain or :rawPredict; optional.',
  }),
  deployedModels: z
    .array(deployedModelSummarySchema)
    .optional()
    .meta({
      description: 'deployedModels are the models deployed to this endpoint, ordered by id; optional.',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['id'],
    }),
  trafficSplit: z.record(z.string(), z.number().int().min(0).max(100)).optional().meta({
    description:
      'trafficSplit is the split in effect, which the gateway routes by: a new spec.trafficSplit takes effect once every model it gives traffic is deployed (Ready); until then the previous one keeps serving (reason TrafficSplitPending). A model of it that stops being Ready keeps its share, its calls answer 503 (reason DeployedModelUnavailable); optional.',
    maxProperties: MAX_TRAFFIC_SPLIT_ENTRIES,
  }),
  deployedModelCount: z.number().int().min(0).optional().meta({
    description:
      'deployedModelCount is the number of entries in deployedModels (a printer column cannot count a list); optional.',
  }),
  createTime: z.string().optional().meta({
    description: 'createTime is when the endpoint was first reconciled, RFC 3339; optional.',
    format: 'date-time',
  }),
  updateTime: z.string().optional().meta({
    description: 'updateTime is when the effective endpoint last changed, RFC 3339; optional.',
    format: 'date-time',
  }),
  modelDeploymentMonitoringJob: z.string().optional().meta({
    description:
      'modelDeploymentMonitoringJob is the resource name of the monitoring job of this endpoint, if any; optional.',
  }),
  etag: z.string().optional().meta({
    description:
      'etag is the fingerprint of the current spec; copy it to spec.etag for a consistent read-modify-write; optional.',
  }),
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'observedGeneration is the metadata.generation this status describes; optional.' }),
  conditions: conditionsSchema('PredictionEndpoint'),
});

export type PredictionEndpointStatus = z.infer<typeof predictionEndpointStatusSchema>;
