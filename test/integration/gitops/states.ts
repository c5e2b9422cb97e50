/**
 * One object of every kind in each state GitOps tools tell apart, reached the way they are reached
 * in a cluster: healthy; waiting for something that will come (another object, a Secret); stuck
 * until a person acts (a spec the webhook would have refused, written while it was not there — this
 * suite runs none — a duplicate id, a foreign Service, a weak hash); being deleted (held by the
 * operator's own finalizer, or by another controller's); and a spec change the operator has not yet
 * observed (written while the operator is stopped).
 */
import { REASON_READING, Reasons, type Reason } from '../../../src/api/common/conditions.js';

export type State = 'healthy' | 'waiting' | 'stuck' | 'deleting' | 'unobserved';

export interface Scenario {
  readonly group: string;
  readonly kind: string;
  /** The plural for kubectl, qualified by group so no other kind matches. */
  readonly resource: string;
  readonly state: State;
  readonly name: string;
  /** The Ready reason the object must reach first (for `deleting`: once deleted). */
  readonly reason: Reason;
  /** `unobserved`: a merge patch of the spec, written while the operator is stopped. */
  readonly specPatch?: Record<string, unknown>;
  /** `deleting`: held by another controller's finalizer (kinds the operator does not hold). */
  readonly foreignFinalizer?: boolean;
}

const PREDICTION = 'prediction.endpoint-operator.dev';
const REGISTRY = 'registry.endpoint-operator.dev';
const POS = 'pos.endpoint-operator.dev';
export const HOLD_FINALIZER = 'gitops-test.example.com/hold';

const of =
  (group: string, kind: string, plural: string) =>
  (state: State, name: string, reason: Reason, extra: Partial<Scenario> = {}): Scenario => ({
    group,
    kind,
    resource: `${plural}.${group}`,
    state,
    name,
    reason,
    ...extra,
  });
const pe = of(PREDICTION, 'PredictionEndpoint', 'predictionendpoints');
const dm = of(PREDICTION, 'DeployedModel', 'deployedmodels');
const rs = of(REGISTRY, 'RegistryService', 'registryservices');
const re = of(REGISTRY, 'RegistryEndpoint', 'registryendpoints');
const shop = of(POS, 'Shop', 'shops');
const su = of(POS, 'ShopUser', 'shopusers');
const au = of(POS, 'AdminUser', 'adminusers');
const mo = of(PREDICTION, 'Model', 'models');

/**
 * A Shop and a RegistryEndpoint have no stuck state a new object can reach: their only such reason, InvalidSpec,
 * breaks a rule the CRD itself enforces (schema or CEL; the apiserver refuses it whether or not the webhook
 * runs). Only an object stored before a rule tightened can be InvalidSpec, which ratcheting keeps.
 */
export const scenarios: readonly Scenario[] = [
  pe('healthy', 'pe-ready', Reasons.Reconciled),
  pe('waiting', 'pe-split-unresolved', Reasons.TrafficSplitUnresolved),
  pe('stuck', 'pe-invalid', Reasons.InvalidSpec),
  pe('deleting', 'pe-deleting', Reasons.DeletionBlocked),
  pe('unobserved', 'pe-changed', Reasons.Reconciled, { specPatch: { displayName: 'Churn prediction v2' } }),
  dm('healthy', 'dm-ready', Reasons.Reconciled),
  dm('waiting', 'dm-no-endpoint', Reasons.EndpointNotFound),
  dm('stuck', 'dm-duplicate-id', Reasons.DuplicateId),
  dm('deleting', 'dm-in-traffic', Reasons.UndeployBlocked),
  dm('unobserved', 'dm-changed', Reasons.Reconciled, { specPatch: { displayName: 'churn v2' } }),
  // A Model has no waiting state, and no stuck one a new object can reach: every rule of one object is CEL.
  mo('healthy', 'model-ready', Reasons.Reconciled),
  mo('deleting', 'model-deleting', Reasons.Reconciled, { foreignFinalizer: true }),
  mo('unobserved', 'model-changed', Reasons.Reconciled, { specPatch: { description: 'retrained' } }),
  rs('healthy', 'svc-ready', Reasons.Reconciled),
  rs('stuck', 'svc-dns-conflict', Reasons.DnsServiceConflict),
  rs('deleting', 'svc-deleting', Reasons.Reconciled, { foreignFinalizer: true }),
  rs('unobserved', 'svc-changed', Reasons.Reconciled, { specPatch: { annotations: { tier: 'silver' } } }),
  re('healthy', 'ep-ready', Reasons.Reconciled),
  re('waiting', 'ep-orphan', Reasons.ParentNotFound),
  re('deleting', 'ep-deleting', Reasons.Reconciled, { foreignFinalizer: true }),
  re('unobserved', 'ep-changed', Reasons.Reconciled, { specPatch: { port: 8444 } }),
  shop('healthy', 'shop-ready', Reasons.Reconciled),
  shop('deleting', 'shop-deleting', Reasons.Reconciled, { foreignFinalizer: true }),
  shop('unobserved', 'shop-changed', Reasons.Reconciled, { specPatch: { displayName: 'Faro Marina' } }),
  su('healthy', 'user-ready', Reasons.Reconciled),
  su('waiting', 'user-no-secret', Reasons.SecretNotFound),
  su('stuck', 'user-weak-hash', Reasons.InvalidPasswordHash),
  su('deleting', 'user-deleting', Reasons.Reconciled, { foreignFinalizer: true }),
  su('unobserved', 'user-changed', Reasons.Reconciled, { specPatch: { displayName: 'Bea Costa' } }),
  au('healthy', 'admin-ready', Reasons.Reconciled),
  au('waiting', 'admin-no-secret', Reasons.SecretNotFound),
  au('stuck', 'admin-weak-hash', Reasons.InvalidPasswordHash),
  au('deleting', 'admin-deleting', Reasons.Reconciled, { foreignFinalizer: true }),
  au('unobserved', 'admin-changed', Reasons.Reconciled, { specPatch: { name: 'Carla Admin' } }),
];

const SVC = 'projects/shop-platform/locations/europe-west1/namespaces/payments/services';
const backend = { url: 'https://models.example.com/churn', protocol: 'KServeV1', modelName: 'churn' };
const resources = { dedicatedResources: { machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 1 } };
const model = 'projects/ml/locations/europe-west4/models/churn';
const deployed = (name: string, endpoint: string, id: string) => ({
  kind: 'DeployedModel',
  name,
  spec: { endpointRef: { name: endpoint }, id, model, displayName: name, ...resources, backend },
});
const registryModel = (name: string) => ({
  kind: 'Model',
  name,
  spec: {
    displayName: 'Churn',
    versions: [
      { id: '1', artifactUri: 'gs://ml-models/churn/1', containerSpec: { imageUri: 'registry.example.com/churn:1' } },
    ],
    versionAliases: [{ alias: 'default', versionId: '1' }],
  },
});
const user = (kind: 'ShopUser' | 'AdminUser', name: string, secret: string, extra: Record<string, unknown>) => ({
  kind,
  name,
  spec: { email: `${name}@example.com`, passwordSecretRef: { name: secret, key: 'password' }, ...extra },
});
const shopUser = (name: string, secret: string) =>
  user('ShopUser', name, secret, { displayName: name, memberships: [{ shop: 'shop-ready', role: 'cashier' }] });
const adminUser = (name: string, secret: string) => user('AdminUser', name, secret, { name, role: 'superadmin' });

/** Every object of the scenarios and what they need, as `{kind, name, spec}` (apiVersion from the kind). */
export const objects: ReadonlyArray<{ kind: string; name: string; spec: Record<string, unknown> }> = [
  { kind: 'PredictionEndpoint', name: 'pe-ready', spec: { displayName: 'Churn prediction' } },
  { kind: 'PredictionEndpoint', name: 'pe-changed', spec: { displayName: 'Churn prediction' } },
  {
    kind: 'PredictionEndpoint',
    name: 'pe-split-unresolved',
    spec: { displayName: 'Churn', trafficSplit: { '1111111111': 100 } },
  },
  // A BigQuery table id of more than 1024 UTF-8 bytes: a rule only the webhook enforces (README).
  {
    kind: 'PredictionEndpoint',
    name: 'pe-invalid',
    spec: {
      displayName: 'Churn',
      predictRequestResponseLoggingConfig: {
        bigqueryDestination: { outputUri: `bq://churn-analytics.logs.${'é'.repeat(600)}` },
      },
    },
  },
  { kind: 'PredictionEndpoint', name: 'pe-deleting', spec: { displayName: 'Churn' } },
  {
    kind: 'PredictionEndpoint',
    name: 'pe-traffic',
    spec: { displayName: 'Churn', trafficSplit: { '5555555555': 100 } },
  },
  deployed('dm-holding', 'pe-deleting', '2222222222'),
  deployed('dm-ready', 'pe-ready', '3333333333'),
  deployed('dm-changed', 'pe-ready', '3333333334'),
  deployed('dm-no-endpoint', 'pe-missing', '4444444440'),
  deployed('dm-duplicate-first', 'pe-ready', '4444444444'),
  deployed('dm-duplicate-id', 'pe-ready', '4444444444'),
  deployed('dm-in-traffic', 'pe-traffic', '5555555555'),
  registryModel('model-ready'),
  registryModel('model-deleting'),
  registryModel('model-changed'),
  { kind: 'RegistryService', name: 'svc-ready', spec: { name: `${SVC}/checkout` } },
  { kind: 'RegistryService', name: 'svc-changed', spec: { name: `${SVC}/changed`, annotations: { tier: 'gold' } } },
  { kind: 'RegistryService', name: 'svc-dns-conflict', spec: { name: `${SVC}/taken`, dns: { enabled: true } } },
  { kind: 'RegistryService', name: 'svc-deleting', spec: { name: `${SVC}/leaving` } },
  {
    kind: 'RegistryEndpoint',
    name: 'ep-ready',
    spec: { name: `${SVC}/checkout/endpoints/ep-ready`, address: '10.20.0.11', port: 8443 },
  },
  {
    kind: 'RegistryEndpoint',
    name: 'ep-changed',
    spec: { name: `${SVC}/checkout/endpoints/ep-changed`, address: '10.20.0.12', port: 8443 },
  },
  {
    kind: 'RegistryEndpoint',
    name: 'ep-orphan',
    spec: { name: `${SVC}/missing/endpoints/ep-orphan`, address: '10.20.0.13', port: 8443 },
  },
  {
    kind: 'RegistryEndpoint',
    name: 'ep-deleting',
    spec: { name: `${SVC}/checkout/endpoints/ep-deleting`, address: '10.20.0.15', port: 8443 },
  },
  { kind: 'Shop', name: 'shop-ready', spec: { displayName: 'Lisbon Baixa', code: 'LIS-001' } },
  { kind: 'Shop', name: 'shop-changed', spec: { displayName: 'Faro', code: 'FAO-001' } },
  { kind: 'Shop', name: 'shop-deleting', spec: { displayName: 'Braga', code: 'BRG-001' } },
  shopUser('user-ready', 'strong-password'),
  shopUser('user-changed', 'strong-password'),
  shopUser('user-no-secret', 'missing-password'),
  shopUser('user-weak-hash', 'weak-password'),
  shopUser('user-deleting', 'strong-password'),
  adminUser('admin-ready', 'strong-password'),
  adminUser('admin-changed', 'strong-password'),
  adminUser('admin-no-secret', 'missing-password'),
  adminUser('admin-weak-hash', 'weak-password'),
  adminUser('admin-deleting', 'strong-password'),
];

export const GROUP_OF: Readonly<Record<string, string>> = {
  PredictionEndpoint: PREDICTION,
  DeployedModel: PREDICTION,
  Model: PREDICTION,
  RegistryService: REGISTRY,
  RegistryEndpoint: REGISTRY,
  Shop: POS,
  ShopUser: POS,
  AdminUser: POS,
};

/** The foreign Service in the way of svc-dns-conflict's DNS projection (named after its service id). */
export const foreignService = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'taken' },
  spec: { ports: [{ name: 'https', port: 443 }] },
};

export interface Expected {
  readonly kstatus: string;
  readonly argo: string;
}

/** What kstatus and Argo CD must conclude about a scenario's object, from the one table. */
export function expected(s: Scenario): Expected {
  if (s.state === 'deleting') return { kstatus: 'Terminating', argo: 'Progressing' };
  if (s.state === 'unobserved') return { kstatus: 'InProgress', argo: 'Progressing' };
  const reading = REASON_READING[s.reason];
  return { kstatus: reading.kstatus, argo: reading.argo };
}
