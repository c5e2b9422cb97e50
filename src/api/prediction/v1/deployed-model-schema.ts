import { z } from 'zod';
import { conditionsSchema } from '../../common/conditions.js';
import { immutable, validations } from '../../crd/cel.js';
import { backendSchema } from './backend.js';
import { containerSpecSchema, DEPLOYMENT_STAGES, servingObjectsSchema } from './container-spec.js';
import { ACCELERATOR_TYPE, DEPLOYED_MODEL_ID, DNS1123_SUBDOMAIN, MACHINE_TYPE, MODEL } from './names.js';

/**
 * DeployedModel v1: Vertex AI's DeployModel / UndeployModel operations as a resource. Creating one
 * deploys `spec.model` to the endpoint named by `spec.endpointRef`; deleting it undeploys it. Fields
 * mirror google.cloud.aiplatform.v1.DeployedModel.
 */

export const DEPLOYED_MODEL_DISPLAY_NAME_MAX_CODE_POINTS = 128;

/** How to change what an immutable serving field describes: Vertex never rolls model pods in place either. */
export const NEW_VERSION_ADVICE =
  'to roll out a new version, create a new DeployedModel with the new value on the same endpoint, then move spec.trafficSplit of the PredictionEndpoint to its id';

const replicaCount = z.number().int({ error: 'must be an integer' }).min(1, { error: 'must be at least 1' });

const acceleratorTypeRequired = {
  rule: "!has(self.acceleratorCount) || self.acceleratorCount == 0 || (has(self.acceleratorType) && self.acceleratorType != '')",
  message: 'is required when acceleratorCount is above 0',
  fieldPath: '.acceleratorType',
  reason: 'FieldValueRequired',
} as const;

export const machineSpecSchema = z
  .object({
    machineType: z
      .string()
      .max(63)
      .regex(MACHINE_TYPE, { error: 'must be a Compute Engine machine type such as n1-standard-4' })
      .meta({
        description:
          'machineType is the Compute Engine machine type of each replica, for example n1-standard-4; required.',
      }),
    acceleratorType: z
      .string()
      .max(64)
      .regex(ACCELERATOR_TYPE, { error: 'must be an accelerator type such as NVIDIA_TESLA_T4' })
      .optional()
      .meta({
        description:
          'acceleratorType is the accelerator attached to each replica, for example NVIDIA_TESLA_T4; optional.',
      }),
    acceleratorCount: z.number().int({ error: 'must be an integer' }).min(0).max(2147483647).optional().meta({
      description:
        'acceleratorCount is the number of accelerators per replica; needs acceleratorType when above 0; optional.',
    }),
  })
  .meta(validations(acceleratorTypeRequired));

export const autoscalingMetricSpecSchema = z.object({
  metricName: z.string().min(1).max(256).meta({
    description:
      'metricName is the resource metric to scale on, for example aiplatform.googleapis.com/prediction/online/cpu/utilization; required.',
  }),
  target: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .meta({ description: 'target utilisation percentage, 1..100 (default 60); optional.' }),
});

export const dedicatedResourcesSchema = z
  .object({
    machineSpec: machineSpecSchema.meta({
      description: 'machineSpec is the machine each replica runs on; immutable; required.',
      // A .meta() replaces the keyword: the object's own rule is repeated next to the transition rule.
      ...validations(acceleratorTypeRequired, immutable(NEW_VERSION_ADVICE, 'without the old value')),
    }),
    minReplicaCount: replicaCount
      .max(2147483647)
      .meta({ description: 'minReplicaCount is the minimum number of replicas, at least 1; required.' }),
    maxReplicaCount: replicaCount.max(2147483647).optional().meta({
      description:
        'maxReplicaCount is the maximum number of replicas, at least minReplicaCount (default minReplicaCount); optional.',
    }),
    requiredReplicaCount: replicaCount.max(2147483647).optional().meta({
      description:
        'requiredReplicaCount is how many replicas must be available for the model to count as deployed, at most minReplicaCount (default minReplicaCount); optional.',
    }),
    spot: z.boolean().optional().meta({
      description:
        "spot runs the replicas on spot (preemptible) nodes, through the machine catalogue's spot node selector and toleration; optional (default false).",
    }),
    autoscalingMetricSpecs: z
      .array(autoscalingMetricSpecSchema)
      .max(16)
      .optional()
      .meta({
        description:
          'autoscalingMetricSpecs are the metrics replicas are scaled on, each metric at most once; optional.',
        // A map keyed by metric: the apiserver refuses a repeated metric, and server-side apply merges per metric.
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['metricName'],
      }),
  })
  .meta(
    validations(
      {
        rule: '!has(self.maxReplicaCount) || self.maxReplicaCount >= self.minReplicaCount',
        message: 'must be at least minReplicaCount',
        fieldPath: '.maxReplicaCount',
      },
      {
        rule: '!has(self.requiredReplicaCount) || self.requiredReplicaCount <= self.minReplicaCount',
        message: 'must be at most minReplicaCount',
        fieldPath: '.requiredReplicaCount',
      },
    ),
  );

export const automaticResourcesSchema = z
  .object({
    minReplicaCount: replicaCount
      .max(2147483647)
      .optional()
      .meta({ description: 'minReplicaCount is the minimum number of replicas, at least 1; optional.' }),
    maxReplicaCount: replicaCount
      .max(2147483647)
      .optional()
      .meta({ description: 'maxReplicaCount is the maximum number of replicas, at least minReplicaCount; optional.' }),
  })
  .meta(
    validations({
      rule: '!has(self.maxReplicaCount) || !has(self.minReplicaCount) || self.maxReplicaCount >= self.minReplicaCount',
      message: 'must be at least minReplicaCount',
      fieldPath: '.maxReplicaCount',
    }),
  );

export const endpointRefSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(253)
    .regex(DNS1123_SUBDOMAIN, {
      error: 'must be the metadata.name of a PredictionEndpoint: a lowercase RFC 1123 subdomain',
    })
    .meta({
      description:
        'name of the PredictionEndpoint in the same namespace; immutable (moving a model is undeploy + deploy); required.',
      ...validations(
        immutable(
          'moving a model to another endpoint is an undeploy and a deploy: delete this DeployedModel and create a new one',
        ),
      ),
    }),
});

export const deployedModelSpecSchema = z
  .object({
    endpointRef: endpointRefSchema.meta({
      description: 'endpointRef names the PredictionEndpoint the model is deployed to; required.',
    }),
    id: z
      .string()
      .max(10)
      .regex(DEPLOYED_MODEL_ID, { error: 'must be 1 to 10 digits' })
      .optional()
      .meta({
        description:
          'id of the deployed model within its endpoint, 1 to 10 digits; assigned and reported in status.id when omitted; immutable; optional.',
        ...validations(immutable('to use another id, delete this DeployedModel and create a new one')),
      }),
    model: z
      .string()
      .max(1024)
      .regex(MODEL, {
        error:
          'must be projects/{project}/locations/{location}/models/{model}, optionally followed by @{version id or alias}',
      })
      .meta({
        description:
          'model is the Model to deploy, projects/{project}/locations/{location}/models/{model}[@{version}]; required.',
      }),
    displayName: z.string().optional().meta({
      description:
        "displayName of the deployed model, at most 128 characters (code points) (default: the model's display name); optional.",
      maxLength: DEPLOYED_MODEL_DISPLAY_NAME_MAX_CODE_POINTS,
    }),
    dedicatedResources: dedicatedResourcesSchema.optional().meta({
      description:
        'dedicatedResources runs the model on dedicated machines; exactly one of dedicatedResources and automaticResources; optional.',
    }),
    automaticResources: automaticResourcesSchema.optional().meta({
      description:
        'automaticResources lets the platform manage the resources; exactly one of dedicatedResources and automaticResources; optional.',
    }),
    backend: backendSchema.optional().meta({
      description:
        'backend is a model server the user runs that answers predict and explain calls for this model (a Service or a URL, its protocol and the model name); at most one of backend and containerSpec; optional (without either the model is recorded but not callable).',
    }),
    containerSpec: containerSpecSchema.optional().meta({
      description:
        'containerSpec is the model server the operator runs for this model (a Deployment, a Service, an autoscaler and a disruption budget, owned by this DeployedModel); immutable; at most one of backend and containerSpec; optional.',
      ...validations(immutable(NEW_VERSION_ADVICE, 'without the old value')),
    }),
    artifactUri: z
      .string()
      .min(1)
      .max(2048)
      .optional()
      .meta({
        description:
          'artifactUri is where the model artifacts are, passed to the container as AIP_STORAGE_URI; immutable; optional.',
        ...validations(immutable(NEW_VERSION_ADVICE)),
      }),
    enableAccessLogging: z.boolean().optional().meta({
      description: 'enableAccessLogging writes prediction access logs to Cloud Logging; optional (default false).',
    }),
    disableContainerLogging: z.boolean().optional().meta({
      description:
        "disableContainerLogging stops the container's stdout/stderr from reaching Cloud Logging; optional (default false).",
    }),
  })
  .meta(
    validations(
      {
        rule: 'has(self.dedicatedResources) || has(self.automaticResources)',
        message: 'exactly one of spec.dedicatedResources and spec.automaticResources is required',
        reason: 'FieldValueRequired',
      },
      {
        rule: '!(has(self.containerSpec) && has(self.backend))',
        message:
          'may not be set together with spec.backend: set spec.containerSpec for a model server the operator runs, or spec.backend for one you run',
        fieldPath: '.containerSpec',
        reason: 'FieldValueForbidden',
      },
      {
        rule: 'has(self.containerSpec) == has(oldSelf.containerSpec)',
        message: `field is immutable: spec.containerSpec may not be added or removed; ${NEW_VERSION_ADVICE}`,
        fieldPath: '.containerSpec',
      },
      {
        rule: '!(has(self.dedicatedResources) && has(self.automaticResources))',
        message: 'may not be set together with spec.dedicatedResources: set exactly one of the two',
        fieldPath: '.automaticResources',
        reason: 'FieldValueForbidden',
      },
    ),
  );

export type DeployedModelSpec = z.infer<typeof deployedModelSpecSchema>;

export const deployedModelStatusSchema = z.object({
  id: z
    .string()
    .optional()
    .meta({ description: 'id is the deployed-model id within the endpoint (spec.id, or the one assigned); optional.' }),
  endpoint: z.string().optional().meta({
    description:
      "endpoint is the endpoint's resource name, projects/{project}/locations/{location}/endpoints/{name}; optional.",
  }),
  deployTime: z
    .string()
    .optional()
    .meta({ description: 'deployTime is when the model was deployed, RFC 3339; optional.', format: 'date-time' }),
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'observedGeneration is the metadata.generation this status describes; optional.' }),
  replicaCount: z.number().int().min(0).optional().meta({
    description: "replicaCount is how many replicas the model's Deployment has (containerSpec only); optional.",
  }),
  availableReplicaCount: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'availableReplicaCount is how many of them are available (containerSpec only); optional.' }),
  deploymentStage: z
    .enum(DEPLOYMENT_STAGES)
    .optional()
    .meta({ description: "deploymentStage is Vertex AI's stage of the deployment (containerSpec only); optional." }),
  modelVersionId: z.string().optional().meta({
    description:
      "modelVersionId is the version of the Model that spec.model names (a Model of the namespace's project) this model serves: resolved from spec.model's @version or @alias (default: the default alias) when first deployed, then kept when the alias moves (Vertex deploys a version, not an alias); optional.",
  }),
  modelReference: z.string().optional().meta({
    description:
      'modelReference is the spec.model that modelVersionId was resolved from; a different spec.model is resolved again; optional.',
  }),
  aliasVersionId: z.string().optional().meta({
    description:
      "aliasVersionId is the version spec.model's alias names now, only while it differs from modelVersionId: this model keeps serving modelVersionId (deploy a new DeployedModel and move the traffic split to serve the new version); optional.",
  }),
  containerSpec: containerSpecSchema.optional().meta({
    description:
      'containerSpec is the model server of the Model version this model serves (modelVersionId), as the gateway calls it; absent for an inline spec.containerSpec; optional.',
  }),
  serving: servingObjectsSchema.optional().meta({
    description:
      'serving names the objects the operator created for spec.containerSpec, in the same namespace; optional.',
  }),
  conditions: conditionsSchema('DeployedModel'),
});

export type DeployedModelStatus = z.infer<typeof deployedModelStatusSchema>;
