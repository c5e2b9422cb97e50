/**
 * The AdmissionReviews the webhook benchmarks send (webhook.ts, webhook-old-new.ts): as kube-apiserver sends them
 * for a CREATE of a valid PredictionEndpoint, an UPDATE of a RegistryEndpoint with its old object, and a CREATE
 * that is denied, with kubectl's managedFields and last-applied annotation.
 */
const endpointName = 'projects/payments-prod/locations/us-east1/namespaces/checkout/services/ledger/endpoints/ledger-1';

function review(
  uid: string,
  kind: { group: string; version: string; kind: string },
  operation: 'CREATE' | 'UPDATE',
  object: unknown,
  oldObject: unknown = null,
): string {
  const resource = { group: kind.group, version: kind.version, resource: `${kind.kind.toLowerCase()}s` };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind,
      resource,
      requestKind: kind,
      requestResource: resource,
      name: (object as { metadata: { name: string } }).metadata.name,
      namespace: 'endpoint-demo',
      operation,
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object,
      oldObject,
      dryRun: false,
      options: {
        apiVersion: 'meta.k8s.io/v1',
        kind: operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions',
        fieldManager: 'kubectl-client-side-apply',
      },
    },
  });
}

const managedFields = [
  {
    manager: 'kubectl-client-side-apply',
    operation: 'Update',
    apiVersion: 'v1',
    time: '2026-03-01T10:00:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } },
      'f:spec': { '.': {}, 'f:displayName': {}, 'f:labels': {}, 'f:trafficSplit': {} },
    },
  },
];
const meta = (name: string) => ({
  name,
  namespace: 'endpoint-demo',
  uid: 'd9607e19-f88f-11e6-a518-42010a800195',
  resourceVersion: '48213',
  generation: 3,
  creationTimestamp: '2026-03-01T10:00:00Z',
  annotations: {
    'kubectl.kubernetes.io/last-applied-configuration':
      '{"apiVersion":"prediction.endpoint-operator.dev/v1","kind":"PredictionEndpoint"}',
  },
  managedFields,
});

const PE = { group: 'prediction.endpoint-operator.dev', version: 'v1', kind: 'PredictionEndpoint' };
const RE = { group: 'registry.endpoint-operator.dev', version: 'v1', kind: 'RegistryEndpoint' };
const predictionEndpoint = {
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'PredictionEndpoint',
  metadata: meta('fraud-scoring'),
  spec: {
    displayName: 'Fraud scoring (card payments)',
    description: 'Scores card payments for fraud in real time.',
    trafficSplit: { '4712380917': 70, '8815520493': 30 },
    labels: { team: 'risk-ml', env: 'production', 'cost-center': 'cc-4021' },
    predictRequestResponseLoggingConfig: {
      enabled: true,
      samplingRate: 0.1,
      bigqueryDestination: { outputUri: 'bq://risk-ml-prod.fraud_logs' },
    },
  },
};
const registryEndpoint = (port: number) => ({
  apiVersion: 'registry.endpoint-operator.dev/v1',
  kind: 'RegistryEndpoint',
  metadata: meta('ledger-1'),
  spec: {
    name: endpointName,
    address: '2001:db8::10',
    port,
    annotations: {
      'example.com/team': 'payments',
      'example.com/tier': 'gold',
      'endpoint-operator.dev/owner': 'platform',
    },
  },
});
const invalid = {
  ...predictionEndpoint,
  spec: {
    ...predictionEndpoint.spec,
    trafficSplit: { '4712380917': 70, '8815520493': 20 },
    network: 'projects/risk-ml-prod/global/networks/default',
    enablePrivateServiceConnect: true,
  },
};

/** The three reviews the benchmarks send in turn, each given its uid. */
export const reviewBodies: readonly ((uid: string) => string)[] = [
  (uid: string) => review(uid, PE, 'CREATE', predictionEndpoint),
  (uid: string) => review(uid, RE, 'UPDATE', registryEndpoint(8443), registryEndpoint(8080)),
  (uid: string) => review(uid, PE, 'CREATE', invalid),
];
