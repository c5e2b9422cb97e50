import { z } from 'zod';

/**
 * `metav1.Condition` as a zod schema, with the constraints Kubernetes declares on it
 * (k8s.io/apimachinery/pkg/apis/meta/v1/types.go), so `status.conditions` in the CRD matches
 * what `kubectl wait --for=condition=Ready` and other tools expect.
 */
export const conditionSchema = z.object({
  type: z
    .string()
    .max(316)
    .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/)
    .meta({ description: 'type is the type of the condition in CamelCase (for example Ready); required.' }),
  status: z.enum(['True', 'False', 'Unknown']).meta({ description: 'status of the condition, one of True, False, Unknown; required.' }),
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'observedGeneration is the metadata.generation the condition was set for; optional.' }),
  lastTransitionTime: z
    .string()
    .meta({ description: 'lastTransitionTime is when the condition last changed from one status to another; required.', format: 'date-time' }),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    .meta({ description: 'reason is a CamelCase programmatic identifier of the last transition; required.' }),
  message: z.string().max(32768).meta({ description: 'message is a human-readable explanation naming the field path and the fix; required (may be empty).' }),
});

export type Condition = z.infer<typeof conditionSchema>;

/** `conditions[]`, a list keyed by `type` (server-side apply merges entries by type). */
export const conditionsSchema = z
  .array(conditionSchema)
  .optional()
  .meta({
    description: 'conditions are the latest observations of the resource; Ready is always present once reconciled; optional.',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });

export const ConditionType = { Ready: 'Ready' } as const;

/** Reasons of a PredictionEndpoint's Ready condition. */
export const PredictionEndpointReason = {
  /** The spec is valid, every traffic-split key names a deployed model, status is up to date. */
  Reconciled: 'Reconciled',
  /** A rule of the spec is broken (a webhook can be bypassed); the message names the field. */
  InvalidSpec: 'InvalidSpec',
  /** A traffic-split key names no deployed model yet: not an admission error because GitOps applies in any order. */
  TrafficSplitUnresolved: 'TrafficSplitUnresolved',
  /** Deletion waits for the endpoint's deployed models to be undeployed. */
  DeletionBlocked: 'DeletionBlocked',
} as const;
export type PredictionEndpointReason = (typeof PredictionEndpointReason)[keyof typeof PredictionEndpointReason];

/** Reasons of a DeployedModel's Ready condition. */
export const DeployedModelReason = {
  /** Deployed: listed in the endpoint's status.deployedModels. */
  Reconciled: 'Reconciled',
  InvalidSpec: 'InvalidSpec',
  /** spec.endpointRef.name names no PredictionEndpoint in the namespace (yet). */
  EndpointNotFound: 'EndpointNotFound',
  /** spec.id is already used by another DeployedModel of the same endpoint. */
  DuplicateId: 'DuplicateId',
  /** Deletion waits until the endpoint's traffic split gives this model no traffic. */
  UndeployBlocked: 'UndeployBlocked',
  /** spec.backend.service names a Service that is missing, lacks the port, or has no ready endpoint on it. */
  BackendUnavailable: 'BackendUnavailable',
} as const;
export type DeployedModelReason = (typeof DeployedModelReason)[keyof typeof DeployedModelReason];
