/**
 * The chart's values as a zod schema, the source of charts/endpoint-operator/values.schema.json: Helm checks every
 * install, upgrade, template and lint against it, so a misspelt key or a value of the wrong kind is refused before
 * anything reaches a cluster, with the key's path in the message. Every object of the values is closed
 * (`additionalProperties: false`) except the open maps (`nodeSelector`). The type check at the end keeps this schema
 * and DeployValues (values.ts) equal: a value added to one and not the other fails `npm run typecheck`.
 */
import { z } from 'zod';
import { networkPolicyPeerSchema } from '../api/common/network-policy-peer.js';
import { artifactBucketSpecSchema } from '../api/prediction/v1/artifact-bucket.js';
import { tolerationSchema } from '../api/prediction/v1/machine-catalogue.js';
import { AUTH_MODES } from '../gateway/auth/settings.js';
import type { DeployValues } from './values.js';

/** A Kubernetes quantity as the chart writes it (a string: `toYaml` keeps it as given). */
const quantity = z.string().regex(/^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$/);
const count = z.int().min(0);
const seconds = z.number().min(0);
const labelKey = z.string().regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/);

const placement = {
  nodeSelector: z.record(z.string(), z.string()),
  tolerations: z.array(tolerationSchema),
};
const resources = z.strictObject({
  requests: z.strictObject({ cpu: quantity, memory: quantity, 'ephemeral-storage': quantity }),
  limits: z.strictObject({ memory: quantity, 'ephemeral-storage': quantity }),
});
const portLimits = {
  headersTimeoutSeconds: seconds,
  requestTimeoutSeconds: seconds,
  keepAliveTimeoutSeconds: seconds,
  maxConnections: count,
};

const gatewaySchema = z.strictObject({
  replicas: count,
  url: z.string(),
  tls: z.strictObject({ issuer: z.enum(['operator', 'external', 'none']), secretName: z.string().min(1) }),
  resources,
  networkPolicy: z.strictObject({ enabled: z.boolean(), clientNamespaceLabel: z.union([z.literal(''), labelKey]) }),
  requestLogSink: z.string(),
  apiWrites: z.strictObject({ enabled: z.boolean() }),
  auth: z.strictObject({
    mode: z.enum(AUTH_MODES as ['token-review', 'none']),
    audiences: z.array(z.string().min(1)),
    tokenTTLSeconds: seconds,
    tokenFailureTTLSeconds: seconds,
    accessTTLSeconds: seconds,
    accessDenyTTLSeconds: seconds,
    cacheSize: count,
    maxReviewsInFlight: count,
    reviewsPerSecond: seconds,
  }),
  limits: z.strictObject({ ...portLimits, maxCallsPerCaller: count, maxBodyBytesPerCaller: count }),
  ...placement,
  podDisruptionBudget: z.strictObject({ maxUnavailable: z.int().min(1) }),
  autoscaling: z.strictObject({
    enabled: z.boolean(),
    minReplicas: z.int().min(1),
    maxReplicas: z.int().min(1),
    targetCPUUtilizationPercentage: z.int().min(1).max(100),
    // The HPA's own bounds for behavior.scaleDown.stabilizationWindowSeconds.
    scaleDownStabilizationSeconds: z.int().min(0).max(3600),
  }),
});

export const deployValuesSchema = z.strictObject({
  namespace: z.string().min(1),
  crds: z.strictObject({ enabled: z.boolean(), keep: z.boolean() }),
  image: z.strictObject({ repository: z.string().min(1), tag: z.string().min(1), pullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']) }),
  replicas: count,
  // projectTemplateProblem (src/api/prediction/v1/names.ts): {namespace} at least once, else lowercase letters, digits, dashes.
  project: z.string().regex(/^([a-z0-9-]|\{namespace\})*\{namespace\}([a-z0-9-]|\{namespace\})*$/),
  location: z.string().min(1),
  gateway: gatewaySchema,
  reservedPrefixes: z.array(z.string().min(1)),
  leaderElection: z.boolean(),
  signin: z.strictObject({
    enabled: z.boolean(),
    namespace: z.string().min(1),
    port: z.int().min(1).max(65535),
    trustedProxies: z.string(),
    limits: z.strictObject({ ...portLimits, verifyConcurrency: count, verifyPerClient: count, verifyQueue: count }),
  }),
  resources,
  networkPolicy: z.strictObject({ enabled: z.boolean(), webhookFrom: z.array(networkPolicyPeerSchema), metricsFrom: z.array(networkPolicyPeerSchema) }),
  serviceMonitor: z.strictObject({ enabled: z.boolean() }),
  tracing: z.strictObject({ otlpEndpoint: z.string(), sampler: z.string(), samplerArg: z.string() }),
  metrics: z.strictObject({ prometheusRule: z.strictObject({ enabled: z.boolean() }), grafanaDashboard: z.strictObject({ enabled: z.boolean() }) }),
  podDisruptionBudget: z.strictObject({ minAvailable: count }),
  modelNetworkPolicy: z.strictObject({ enabled: z.boolean(), extraIngressFrom: z.array(networkPolicyPeerSchema) }),
  // The bucket map: a bucket's name (the object's metadata.name, a DNS subdomain) → its ModelArtifactBucket spec.
  modelArtifactBuckets: z.record(
    z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/),
    artifactBucketSpecSchema,
  ),
  ...placement,
});

/** values.schema.json: JSON Schema draft 7, which Helm 3 and 4 both read. */
export function valuesJsonSchema(): string {
  const schema = z.toJSONSchema(deployValuesSchema, { target: 'draft-07', io: 'input', unrepresentable: 'throw', cycles: 'throw', reused: 'inline' });
  return `${JSON.stringify(schema, null, 2)}\n`;
}

// DeployValues and the schema's type are the same type: each is assignable to the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const valuesMatchSchema: Same<z.input<typeof deployValuesSchema>, DeployValues> = true;
void valuesMatchSchema;
