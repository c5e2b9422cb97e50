/**
 * The one condition vocabulary: `metav1.Condition` as a zod schema (the CRDs' `status.conditions`
 * are generated from it), and the catalogue of the `Ready` condition's reasons, per kind. The
 * CRD descriptions and the README's troubleshooting table list exactly these reasons (a test
 * checks both), and each reconciler's verdicts are typed with its kind's reason union.
 */
import { z } from 'zod';

// metav1.Condition's own validation (k8s.io/apimachinery/pkg/apis/meta/v1/types.go markers).
const CONDITION_TYPE_PATTERN = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const CONDITION_REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

export const conditionSchema = z.object({
  type: z.string().min(1).max(316).regex(CONDITION_TYPE_PATTERN).meta({ description: 'type of the condition in CamelCase, for example Ready; required.' }),
  status: z.enum(['True', 'False', 'Unknown']).meta({ description: 'status of the condition: True, False or Unknown; required.' }),
  observedGeneration: z.number().int().min(0).optional().meta({ description: 'observedGeneration is the metadata.generation the condition was computed from; optional.' }),
  lastTransitionTime: z.string().meta({ format: 'date-time', description: 'lastTransitionTime is when status last changed (RFC 3339); required.' }),
  reason: z.string().min(1).max(1024).regex(CONDITION_REASON_PATTERN).meta({ description: 'reason is a CamelCase code for the last transition, for example InvalidSpec; required.' }),
  message: z.string().max(32768).meta({ description: 'message explains the condition, naming the field path and the fix; required (may be empty).' }),
});
export type Condition = z.infer<typeof conditionSchema>;
export type ConditionStatus = Condition['status'];

export const ConditionType = { Ready: 'Ready' } as const;

/** Every reason of a `Ready` condition, with the status it goes with. */
export const Reasons = {
  /** True: the spec is realised. */
  Reconciled: 'Reconciled',
  /** False: a rule of the spec is broken (the webhook was down or bypassed); the message names the field path and the fix. */
  InvalidSpec: 'InvalidSpec',
  /** Unknown: an unexpected failure talking to the API server; retried with backoff. */
  ReconcileError: 'ReconcileError',
  /** False: the API server refused a request as forbidden (403) or invalid (422); not retried until the object changes. */
  RequestRejected: 'RequestRejected',
  /** False: a PredictionEndpoint's traffic-split key names no deployed model (yet). */
  TrafficSplitUnresolved: 'TrafficSplitUnresolved',
  /** False: a PredictionEndpoint's deletion waits for the DeployedModels that reference it. */
  DeletionBlocked: 'DeletionBlocked',
  /** False: no DeployedModel references the PredictionEndpoint any more; the deletion completes. */
  Deleting: 'Deleting',
  /** False: a DeployedModel's endpointRef names no PredictionEndpoint (yet). */
  EndpointNotFound: 'EndpointNotFound',
  /** False: another DeployedModel of the endpoint has this spec.id. */
  DuplicateId: 'DuplicateId',
  /** Unknown: a DeployedModel's id is being assigned. */
  Deploying: 'Deploying',
  /** False: a DeployedModel being deleted still receives traffic. */
  UndeployBlocked: 'UndeployBlocked',
  /** False: the endpoint gives the DeployedModel no traffic; the deletion completes. */
  Undeploying: 'Undeploying',
  /** False: a DeployedModel's spec.backend.service is missing, lacks the port, or has no ready endpoint on it. */
  BackendUnavailable: 'BackendUnavailable',
  /** False: a RegistryEndpoint's parent RegistryService does not exist (yet). */
  ParentNotFound: 'ParentNotFound',
  /** False: RegistryServices in other namespaces claim the same spec.name; the oldest keeps resolving. */
  NameConflict: 'NameConflict',
  /** False: spec.dns is on, but a Service of that name exists that the operator does not manage; it is left alone. */
  DnsServiceConflict: 'DnsServiceConflict',
  /** False: two identities share an email. */
  DuplicateEmail: 'DuplicateEmail',
  /** False: the password Secret or its key is missing. */
  SecretNotFound: 'SecretNotFound',
  /** False: the password Secret holds no argon2id PHC string at OWASP's minimum. */
  InvalidPasswordHash: 'InvalidPasswordHash',
  /** False: a ShopUser's membership names a Shop that does not exist (yet). */
  ShopNotFound: 'ShopNotFound',
} as const;
export type Reason = (typeof Reasons)[keyof typeof Reasons];

/** The `Ready` status each reason goes with (the README's table shows it). */
export const REASON_READY: Readonly<Record<Reason, ConditionStatus>> = {
  Reconciled: 'True',
  InvalidSpec: 'False',
  ReconcileError: 'Unknown',
  RequestRejected: 'False',
  TrafficSplitUnresolved: 'False',
  DeletionBlocked: 'False',
  Deleting: 'False',
  EndpointNotFound: 'False',
  DuplicateId: 'False',
  Deploying: 'Unknown',
  UndeployBlocked: 'False',
  Undeploying: 'False',
  BackendUnavailable: 'False',
  ParentNotFound: 'False',
  NameConflict: 'False',
  DnsServiceConflict: 'False',
  DuplicateEmail: 'False',
  SecretNotFound: 'False',
  InvalidPasswordHash: 'False',
  ShopNotFound: 'False',
};

/** What every kind the operator's controllers reconcile can report (`withErrorReporting`). */
const reconciled = [Reasons.Reconciled, Reasons.InvalidSpec, Reasons.ReconcileError, Reasons.RequestRejected] as const;
const identity = [Reasons.Reconciled, Reasons.InvalidSpec, Reasons.DuplicateEmail, Reasons.SecretNotFound, Reasons.InvalidPasswordHash] as const;

/** The reasons each kind's `Ready` condition can carry: exactly these, no others. */
export const KIND_REASONS = {
  PredictionEndpoint: [...reconciled, Reasons.TrafficSplitUnresolved, Reasons.DeletionBlocked, Reasons.Deleting],
  DeployedModel: [...reconciled, Reasons.EndpointNotFound, Reasons.DuplicateId, Reasons.Deploying, Reasons.UndeployBlocked, Reasons.Undeploying, Reasons.BackendUnavailable],
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

/** The prefix of a conditions description before its reason list (the reasons test parses it). */
export const REASONS_PREFIX = 'Ready reasons: ';

/**
 * `status.conditions` of `kind`: a list keyed by `type` (server-side apply merges one condition at
 * a time), described with the kind's reasons.
 */
export function conditionsSchema(kind: ConditionKind) {
  const reasons: readonly Reason[] = KIND_REASONS[kind];
  const description = reasons.length === 0
    ? 'conditions are not set for this kind; optional.'
    : `conditions are the latest observations; Ready is always present once reconciled. ${REASONS_PREFIX}${reasons.join(', ')}; optional.`;
  return z.array(conditionSchema).optional().meta({
    description,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });
}
