/**
 * The ClusterRoles users bind (per namespace, with a RoleBinding) to let a workload call the gateway,
 * and the one Prometheus needs for /metrics. The verbs are the gateway's (src/gateway/auth/attributes.ts):
 * custom, so that reading an object never grants calling it.
 *
 * Aggregation (the clusterrole-aggregation controller folds these into the built-in roles):
 * - prediction-caller → `edit` and `admin`, not `view`: an editor can already change the endpoint and
 *   deploy models to it, so calling it adds nothing; a read-only user must not spend model-server
 *   compute or read predictions (the same line `view` draws at pods/exec and Secrets).
 * - registry-reader → `view`, `edit` and `admin`: resolving a service reads what its RegistryEndpoints
 *   already publish, which is what `view` is for.
 * - metrics-reader: none; it is bound to Prometheus' ServiceAccount.
 * - model-deployer: none; it is what Vertex's write API asks of its caller (create/patch/delete, and get/list for
 *   ModelService's reads, on models, predictionendpoints and deployedmodels), bound per namespace to the notebooks
 *   and pipelines that upload and deploy.
 */
import {
  CALL_RULES,
  METRICS_READER_ROLE,
  MODEL_DEPLOYER_ROLE,
  PREDICTION_CALLER_ROLE,
  REGISTRY_READER_ROLE,
} from '../gateway/auth/attributes.js';
import { PREDICTION_GROUP } from '../api/prediction/v1/names.js';
import type { PolicyRule } from './rbac.js';
import { commonLabels } from './values.js';

const AGGREGATE = 'rbac.authorization.k8s.io/aggregate-to-';

/** The rules a role needs for the calls the gateway maps to it, grouped by resource. */
function callerRules(role: string): PolicyRule[] {
  const byResource = new Map<string, PolicyRule>();
  for (const rule of Object.values(CALL_RULES)) {
    if (rule.clusterRole !== role) continue;
    const key = `${rule.group}/${rule.resource}`;
    const existing = byResource.get(key) ?? { apiGroups: [rule.group], resources: [rule.resource], verbs: [] };
    if (!existing.verbs.includes(rule.verb)) existing.verbs.push(rule.verb);
    byResource.set(key, existing);
  }
  return [...byResource.values()];
}

function clusterRole(name: string, aggregateTo: string[], rules: object[]): object {
  const labels: Record<string, string> = { ...commonLabels('rbac') };
  for (const role of aggregateTo) labels[`${AGGREGATE}${role}`] = 'true';
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels }, rules };
}

export function callerRoleManifests(): object[] {
  return [
    clusterRole(PREDICTION_CALLER_ROLE, ['edit', 'admin'], callerRules(PREDICTION_CALLER_ROLE)),
    clusterRole(REGISTRY_READER_ROLE, ['view', 'edit', 'admin'], callerRules(REGISTRY_READER_ROLE)),
    clusterRole(METRICS_READER_ROLE, [], [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]),
    clusterRole(MODEL_DEPLOYER_ROLE, [], [
      {
        apiGroups: [PREDICTION_GROUP],
        resources: ['models', 'predictionendpoints', 'deployedmodels'],
        verbs: ['get', 'list', 'create', 'patch', 'delete'],
      },
    ]),
  ];
}
