/**
 * The one condition vocabulary: `metav1.Condition` as a zod schema (the CRDs' `status.conditions`
 * are generated from it), and the catalogue of the `Ready` condition's reasons, per kind. The
 * CRD descriptions and the README's troubleshooting table list exactly these reasons (a test
 * checks both), and each reconciler's verdicts are typed with its kind's reason union.
 */
import { z } from 'zod';

// metav1.Condition's own validation (k8s.io/apimachinery/pkg/apis/meta/v1/types.go markers).
const CONDITION_TYPE_PATTERN =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const CONDITION_REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

export const conditionSchema = z.object({
  type: z
    .string()
    .min(1)
    .max(316)
    .regex(CONDITION_TYPE_PATTERN)
    .meta({ description: 'type of the condition in CamelCase, for example Ready; required.' }),
  status: z
    .enum(['True', 'False', 'Unknown'])
    .meta({ description: 'status of the condition: True, False or Unknown; required.' }),
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'observedGeneration is the metadata.generation the condition was computed from; optional.' }),
  lastTransitionTime: z
    .string()
    .meta({ format: 'date-time', description: 'lastTransitionTime is when status last changed (RFC 3339); required.' }),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(CONDITION_REASON_PATTERN)
    .meta({ description: 'reason is a CamelCase code for the last transition, for example InvalidSpec; required.' }),
  message: z.string().max(32768).meta({
    description: 'message explains the condition, naming the field path and the fix; required (may be empty).',
  }),
});
export type Condition = z.infer<typeof conditionSchema>;
export type ConditionStatus = Condition['status'];

/**
 * `Ready` is the summary (`kubectl wait --for=condition=Ready`); `Reconciling` and `Stalled` are
 * kstatus's "abnormal-true" conditions (sigs.k8s.io/cli-utils/pkg/kstatus): present and `True` only
 * while they apply, absent otherwise, so a reader never has to tell a stale `False` from a fresh one.
 */
export const ConditionType = { Ready: 'Ready', Reconciling: 'Reconciling', Stalled: 'Stalled' } as const;

/** Every reason of a `Ready` condition; how each is read is in `REASON_READING`. */
export const Reasons = {
  /** The spec is realised. */
  Reconciled: 'Reconciled',
  /** A rule of the spec is broken (the webhook was down or bypassed); the message names the field path and the fix. */
  InvalidSpec: 'InvalidSpec',
  /** An unexpected failure talking to the API server; retried with backoff. */
  ReconcileError: 'ReconcileError',
  /** The API server refused a request as forbidden (403) or invalid (422); not retried until the object changes. */
  RequestRejected: 'RequestRejected',
  /** A PredictionEndpoint's traffic-split key names no deployed model (yet). */
  TrafficSplitUnresolved: 'TrafficSplitUnresolved',
  /** A new spec.trafficSplit waits until every model it gives traffic is deployed; the previous split keeps serving. */
  TrafficSplitPending: 'TrafficSplitPending',
  /** A model the split in effect gives traffic is not Ready: its calls answer 503, its share is kept (never moved to the others). */
  DeployedModelUnavailable: 'DeployedModelUnavailable',
  /** A PredictionEndpoint's deletion waits for the DeployedModels that reference it. */
  DeletionBlocked: 'DeletionBlocked',
  /** No DeployedModel references the PredictionEndpoint any more; the deletion completes. */
  Deleting: 'Deleting',
  /** A DeployedModel's endpointRef names no PredictionEndpoint (yet). */
  EndpointNotFound: 'EndpointNotFound',
  /** Another DeployedModel of the endpoint has this spec.id. */
  DuplicateId: 'DuplicateId',
  /** A DeployedModel's id is being assigned. */
  Deploying: 'Deploying',
  /** A DeployedModel being deleted still receives traffic. */
  UndeployBlocked: 'UndeployBlocked',
  /** The endpoint gives the DeployedModel no traffic; the deletion completes. */
  Undeploying: 'Undeploying',
  /** A DeployedModel's spec.backend.service is missing, lacks the port, or has no ready endpoint on it. */
  BackendUnavailable: 'BackendUnavailable',
  /** A DeployedModel's containerSpec replicas are being created or are starting; the message names the worst pod. */
  ReplicasStarting: 'ReplicasStarting',
  /** The machine catalogue has no entry for the DeployedModel's machine type (or accelerator type), or none is in effect (it did not parse at start-up). */
  MachineTypeUnknown: 'MachineTypeUnknown',
  /** A DeployedModel's gs:// artifactUri names a bucket the bucket map (ModelArtifactBucket) lacks, or a path its entry cannot serve. */
  ArtifactBucketUnmapped: 'ArtifactBucketUnmapped',
  /** No node has the resources, accelerators or labels a DeployedModel's replica asks for. */
  Unschedulable: 'Unschedulable',
  /** A DeployedModel's container image cannot be pulled. */
  ImagePullBackOff: 'ImagePullBackOff',
  /** A DeployedModel's model server keeps exiting. */
  CrashLoopBackOff: 'CrashLoopBackOff',
  /** A DeployedModel's model server was killed for exceeding its memory limit (the message names the limit). */
  OOMKilled: 'OOMKilled',
  /** A DeployedModel's replicas did not become available within containerSpec.deploymentTimeout. */
  DeploymentTimeout: 'DeploymentTimeout',
  /** A RegistryEndpoint's parent RegistryService does not exist (yet). */
  ParentNotFound: 'ParentNotFound',
  /** RegistryServices in other namespaces claim the same spec.name; the oldest keeps resolving. */
  NameConflict: 'NameConflict',
  /** spec.dns is on, but a Service of that name exists that the operator does not manage; it is left alone. */
  DnsServiceConflict: 'DnsServiceConflict',
  /** Two identities share an email: neither can sign in until one is changed. */
  DuplicateEmail: 'DuplicateEmail',
  /** The password Secret or its key is missing (GitOps may apply it later). */
  SecretNotFound: 'SecretNotFound',
  /** The password Secret holds no argon2id PHC string at OWASP's minimum. */
  InvalidPasswordHash: 'InvalidPasswordHash',
  /** A ShopUser's membership names a Shop that does not exist (yet): GitOps may apply the Shop later. */
  ShopNotFound: 'ShopNotFound',
  /** A DeployedModel's spec.model names a Model of its namespace that does not exist (yet): GitOps may apply it later. */
  ModelNotFound: 'ModelNotFound',
  /** A DeployedModel's spec.model names a version or alias its Model does not have (yet). */
  ModelVersionNotFound: 'ModelVersionNotFound',
} as const;
export type Reason = (typeof Reasons)[keyof typeof Reasons];

/** The kstatus condition a reason sets to True: waiting (`Reconciling`), stuck until a person acts (`Stalled`), or none. */
export type ProgressCondition = typeof ConditionType.Reconciling | typeof ConditionType.Stalled;
/** cli-utils `status.Status` values a reason leads to (Terminating: the object has a deletionTimestamp). */
export type KstatusResult = 'Current' | 'InProgress' | 'Failed' | 'Terminating';
/** Argo CD `health.HealthStatusCode` values (gitops-engine pkg/health). */
export type ArgoHealth = 'Healthy' | 'Progressing' | 'Degraded' | 'Suspended';

export interface ReasonReading {
  readonly ready: ConditionStatus;
  readonly progress: ProgressCondition | undefined;
  readonly kstatus: KstatusResult;
  readonly argo: ArgoHealth;
}

const healthy: ReasonReading = { ready: 'True', progress: undefined, kstatus: 'Current', argo: 'Healthy' };
const waiting = (ready: ConditionStatus): ReasonReading => ({
  ready,
  progress: ConditionType.Reconciling,
  kstatus: 'InProgress',
  argo: 'Progressing',
});
const stuck: ReasonReading = { ready: 'False', progress: ConditionType.Stalled, kstatus: 'Failed', argo: 'Degraded' };
// The deletion reasons are only reported with a deletionTimestamp, which kstatus reads first.
const deleting: ReasonReading = {
  ready: 'False',
  progress: ConditionType.Reconciling,
  kstatus: 'Terminating',
  argo: 'Progressing',
};

/**
 * The one table of how each reason is read: its `Ready` status, the kstatus condition it sets, and
 * what kstatus (Flux `wait`, kpt, cli-utils) and Argo CD's health scripts conclude. Waiting means
 * another object, an id, a backend or a retry will change things without a person; stuck means the
 * controller cannot progress until someone changes a manifest, a Secret or another object's name.
 * The README's troubleshooting table and the CRDs' conditions descriptions are rendered from it.
 */
export const REASON_READING: Readonly<Record<Reason, ReasonReading>> = {
  Reconciled: healthy,
  InvalidSpec: stuck,
  ReconcileError: waiting('Unknown'),
  RequestRejected: stuck,
  TrafficSplitUnresolved: waiting('False'),
  TrafficSplitPending: waiting('False'),
  // Waiting, as the endpoint itself needs nothing: the model's own condition says whether a person must act (Stalled).
  DeployedModelUnavailable: waiting('False'),
  DeletionBlocked: deleting,
  Deleting: deleting,
  EndpointNotFound: waiting('False'),
  DuplicateId: stuck,
  Deploying: waiting('Unknown'),
  UndeployBlocked: deleting,
  Undeploying: deleting,
  BackendUnavailable: waiting('False'),
  ReplicasStarting: waiting('False'),
  MachineTypeUnknown: stuck,
  ArtifactBucketUnmapped: stuck,
  Unschedulable: stuck,
  ImagePullBackOff: stuck,
  CrashLoopBackOff: stuck,
  // Stuck: the kubelet restarts it, but a server that outgrows its limit at start does so again every time.
  OOMKilled: stuck,
  DeploymentTimeout: stuck,
  ParentNotFound: waiting('False'),
  NameConflict: stuck,
  DnsServiceConflict: stuck,
  DuplicateEmail: stuck,
  SecretNotFound: waiting('False'),
  InvalidPasswordHash: stuck,
  ShopNotFound: waiting('False'),
  ModelNotFound: waiting('False'),
  ModelVersionNotFound: waiting('False'),
};

/** What every kind the operator's controllers reconcile can report (`withErrorReporting`). */
const reconciled = [Reasons.Reconciled, Reasons.InvalidSpec, Reasons.ReconcileError, Reasons.RequestRejected] as const;
const identity = [
  Reasons.Reconciled,
  Reasons.InvalidSpec,
  Reasons.DuplicateEmail,
  Reasons.SecretNotFound,
  Reasons.InvalidPasswordHash,
] as const;

/** The reasons each kind's `Ready` condition can carry: exactly these, no others. */
export const KIND_REASONS = {
  PredictionEndpoint: [
    ...reconciled,
    Reasons.TrafficSplitUnresolved,
    Reasons.TrafficSplitPending,
    Reasons.DeployedModelUnavailable,
    Reasons.DeletionBlocked,
    Reasons.Deleting,
  ],
  DeployedModel: [
    ...reconciled,
    Reasons.EndpointNotFound,
    Reasons.DuplicateId,
    Reasons.Deploying,
    Reasons.UndeployBlocked,
    Reasons.Undeploying,
    Reasons.BackendUnavailable,
    Reasons.ReplicasStarting,
    Reasons.MachineTypeUnknown,
    Reasons.ArtifactBucketUnmapped,
    Reasons.Unschedulable,
    Reasons.ImagePullBackOff,
    Reasons.CrashLoopBackOff,
    Reasons.OOMKilled,
    Reasons.DeploymentTimeout,
    Reasons.ModelNotFound,
    Reasons.ModelVersionNotFound,
  ],
  Model: [...reconciled],
  RegistryService: [...reconciled, Reasons.NameConflict, Reasons.DnsServiceConflict],
  RegistryEndpoint: [...reconciled, Reasons.ParentNotFound],
  Shop: [Reasons.Reconciled, Reasons.InvalidSpec],
  ShopUser: [...identity, Reasons.ShopNotFound],
  AdminUser: [...identity],
  /** Sessions carry no conditions: the sign-in API owns them. */
  SignInSession: [],
} as const satisfies Record<string, readonly Reason[]>;
export type ConditionKind = keyof typeof KIND_REASONS;

export type PredictionEndpointReason = (typeof KIND_REASONS.PredictionEndpoint)[number];
export type DeployedModelReason = (typeof KIND_REASONS.DeployedModel)[number];
export type ModelReason = (typeof KIND_REASONS.Model)[number];
export type RegistryServiceReason = (typeof KIND_REASONS.RegistryService)[number];
export type RegistryEndpointReason = (typeof KIND_REASONS.RegistryEndpoint)[number];
export type ShopReason = (typeof KIND_REASONS.Shop)[number];
export type ShopUserReason = (typeof KIND_REASONS.ShopUser)[number];
export type AdminUserReason = (typeof KIND_REASONS.AdminUser)[number];

/** What a reconciler concludes about an object: the Ready condition without its bookkeeping fields. */
export interface ReadyVerdict<R extends Reason = Reason> {
  readonly status: ConditionStatus;
  readonly reason: R;
  readonly message: string;
}

/** A status type as the reconciler writes it: the schema's (`z.infer`) with the fields it always sets. */
export type Written<S, K extends keyof S> = S & { [P in K]-?: Exclude<S[P], undefined> };

/** The labels of a conditions description's reason lists (the reasons test parses them). */
export const REASONS_PREFIX = 'Ready reasons: ';
export const PROGRESS_PREFIX: Readonly<Record<ProgressCondition, string>> = {
  Reconciling: 'Reconciling=True reasons: ',
  Stalled: 'Stalled=True reasons: ',
};

/** The reasons of `kind` that set `progress` to True (kstatus's reading of them). */
export function reasonsSetting(kind: ConditionKind, progress: ProgressCondition): Reason[] {
  return (KIND_REASONS[kind] as readonly Reason[]).filter((r) => REASON_READING[r].progress === progress);
}

/**
 * `status.conditions` of `kind`: a list keyed by `type` (server-side apply merges one condition at
 * a time), described with the kind's reasons and which of them mean waiting or stuck.
 */
export function conditionsSchema(kind: ConditionKind) {
  const reasons: readonly Reason[] = KIND_REASONS[kind];
  const lists = [
    `${REASONS_PREFIX}${reasons.join(', ')}`,
    ...(['Reconciling', 'Stalled'] as const).map(
      (p) => `${PROGRESS_PREFIX[p]}${reasonsSetting(kind, p).join(', ') || 'none'}`,
    ),
  ];
  const description =
    reasons.length === 0
      ? 'conditions are not set for this kind; optional.'
      : 'conditions are the latest observations, each with the observedGeneration it was computed from. Ready is always present once reconciled; ' +
        'Reconciling=True while the operator waits for something that will come without a person, Stalled=True when a person must change something ' +
        `(kstatus conventions: each is absent otherwise, carrying Ready's reason and message). ${lists.join('; ')}; optional.`;
  return z
    .array(conditionSchema)
    .optional()
    .meta({
      description,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    });
}
