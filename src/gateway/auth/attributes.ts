/**
 * What each gateway call asks RBAC for, declared as data (kube-rbac-proxy keeps this mapping in one
 * place, apart from the HTTP plumbing). Custom verbs, not get/create: reading an object must not grant
 * calling it, and calling it must not grant creating one (kubernetes#8110 made pods/exec its own
 * permission for the same reason). `kubectl auth can-i VERB RESOURCE/NAME -n NS --as USER` answers
 * exactly what the gateway enforces.
 */
import { PREDICTION_GROUP } from '../../api/prediction/v1/names.js';
import { REGISTRY_GROUP } from '../../api/registry/status.js';

export type AuthCall =
  | 'predict'
  | 'rawPredict'
  | 'streamRawPredict'
  | 'explain'
  | 'getEndpoint'
  | 'listPredictionEndpoints'
  | 'resolve'
  | 'getService'
  | 'listEndpoints'
  | WriteCall
  | 'metrics';

/** Vertex's write API (ModelService, EndpointService writes) and the Model reads: Kubernetes verbs on the kinds written. */
export type WriteCall =
  | 'getModel'
  | 'listModels'
  | 'createModel'
  | 'patchModel'
  | 'deleteModel'
  | 'createPredictionEndpoint'
  | 'patchPredictionEndpoint'
  | 'deletePredictionEndpoint'
  | 'createDeployedModel'
  | 'patchDeployedModel'
  | 'deleteDeployedModel';

interface ResourceRule {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  /** `named`: the object the call names; `collection`: the resource in the object's namespace (list). */
  readonly scope: 'named' | 'collection';
  /** The shipped ClusterRole that grants it (src/deploy/rbac.ts), named in refusals. */
  readonly clusterRole: string;
}

export const PREDICTION_CALLER_ROLE = 'endpoint-operator-prediction-caller';
export const REGISTRY_READER_ROLE = 'endpoint-operator-registry-reader';
export const METRICS_READER_ROLE = 'endpoint-operator-metrics-reader';
/** Grants Vertex's write API: create/patch/delete/get/list on models, predictionendpoints, deployedmodels. */
export const MODEL_DEPLOYER_ROLE = 'endpoint-operator-model-deployer';

/**
 * A write is authorised as the caller with the Kubernetes verb it performs (`kubectl auth can-i create models
 * --as USER` answers what the gateway enforces); the gateway's own ServiceAccount then writes.
 */
function deployer(verb: string, resource: string, scope: 'named' | 'collection' = 'named'): ResourceRule {
  return { verb, group: PREDICTION_GROUP, resource, scope, clusterRole: MODEL_DEPLOYER_ROLE };
}

/** The table: call → verb on resource. */
export const CALL_RULES: Readonly<Record<Exclude<AuthCall, 'metrics'>, ResourceRule>> = {
  predict: {
    verb: 'predict',
    group: PREDICTION_GROUP,
    resource: 'predictionendpoints',
    scope: 'named',
    clusterRole: PREDICTION_CALLER_ROLE,
  },
  rawPredict: {
    verb: 'predict',
    group: PREDICTION_GROUP,
    resource: 'predictionendpoints',
    scope: 'named',
    clusterRole: PREDICTION_CALLER_ROLE,
  },
  streamRawPredict: {
    verb: 'predict',
    group: PREDICTION_GROUP,
    resource: 'predictionendpoints',
    scope: 'named',
    clusterRole: PREDICTION_CALLER_ROLE,
  },
  explain: {
    verb: 'explain',
    group: PREDICTION_GROUP,
    resource: 'predictionendpoints',
    scope: 'named',
    clusterRole: PREDICTION_CALLER_ROLE,
  },
  // Vertex's EndpointService reads (GetEndpoint, ListEndpoints): the SDKs read the Endpoint before they predict.
  getEndpoint: {
    verb: 'get',
    group: PREDICTION_GROUP,
    resource: 'predictionendpoints',
    scope: 'named',
    clusterRole: PREDICTION_CALLER_ROLE,
  },
  listPredictionEndpoints: {
    verb: 'list',
    group: PREDICTION_GROUP,
    resource: 'predictionendpoints',
    scope: 'collection',
    clusterRole: PREDICTION_CALLER_ROLE,
  },
  resolve: {
    verb: 'resolve',
    group: REGISTRY_GROUP,
    resource: 'registryservices',
    scope: 'named',
    clusterRole: REGISTRY_READER_ROLE,
  },
  getService: {
    verb: 'get',
    group: REGISTRY_GROUP,
    resource: 'registryservices',
    scope: 'named',
    clusterRole: REGISTRY_READER_ROLE,
  },
  listEndpoints: {
    verb: 'list',
    group: REGISTRY_GROUP,
    resource: 'registryendpoints',
    scope: 'collection',
    clusterRole: REGISTRY_READER_ROLE,
  },
  getModel: deployer('get', 'models'),
  listModels: deployer('list', 'models', 'collection'),
  createModel: deployer('create', 'models'),
  patchModel: deployer('patch', 'models'),
  deleteModel: deployer('delete', 'models'),
  createPredictionEndpoint: deployer('create', 'predictionendpoints'),
  patchPredictionEndpoint: deployer('patch', 'predictionendpoints'),
  deletePredictionEndpoint: deployer('delete', 'predictionendpoints'),
  createDeployedModel: deployer('create', 'deployedmodels'),
  patchDeployedModel: deployer('patch', 'deployedmodels'),
  deleteDeployedModel: deployer('delete', 'deployedmodels'),
};

/** SubjectAccessReview spec.resourceAttributes. */
export interface ResourceAttributes {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly namespace: string;
  readonly name?: string;
}

/** SubjectAccessReview spec.nonResourceAttributes (controller-runtime's metrics filter asks `get` on the URL path). */
export interface NonResourceAttributes {
  readonly verb: string;
  readonly path: string;
}

export type AccessAttributes =
  { readonly resource: ResourceAttributes } | { readonly nonResource: NonResourceAttributes };

/** The object a call names, as far as the request (not the cluster) tells. */
export interface CallTarget {
  readonly namespace: string;
  readonly name: string;
}

export function accessAttributes(call: AuthCall, target: CallTarget | undefined): AccessAttributes {
  if (call === 'metrics') return { nonResource: { verb: 'get', path: '/metrics' } };
  if (target === undefined) throw new Error(`the ${call} call needs the object it names`);
  const rule = CALL_RULES[call];
  const base = { verb: rule.verb, group: rule.group, resource: rule.resource, namespace: target.namespace };
  return { resource: rule.scope === 'named' ? { ...base, name: target.name } : base };
}

/** The cache key part of the attributes (user parts are added by the caller). */
export function attributesKey(a: AccessAttributes): string {
  if ('nonResource' in a) return `N\u0000${a.nonResource.verb}\u0000${a.nonResource.path}`;
  const r = a.resource;
  return `R\u0000${r.verb}\u0000${r.group}\u0000${r.resource}\u0000${r.namespace}\u0000${r.name ?? ''}`;
}

/**
 * The refusal text: what was refused and the permission a binding must grant. Built only from the
 * request, never from what the cluster holds, so it is the same whether or not the object exists
 * (Google: "Permission '…' denied on resource '…' (or it may not exist)").
 */
export function permissionDeniedMessage(call: AuthCall, described: string, target: CallTarget | undefined): string {
  if (call === 'metrics') {
    return `Permission denied: get on the non-resource URL /metrics; bind ClusterRole ${METRICS_READER_ROLE} (nonResourceURLs ["/metrics"], verbs ["get"]) to the caller.`;
  }
  const rule = CALL_RULES[call];
  const where = target === undefined ? "in the object's namespace" : `in namespace "${target.namespace}"`;
  const what = rule.scope === 'named' && target !== undefined ? `${rule.resource}/${target.name}` : rule.resource;
  return (
    `Permission '${rule.resource}.${rule.verb}' denied on resource '${described}' (or it may not exist): ` +
    `verb "${rule.verb}" on ${what} (group "${rule.group}") ${where} was refused; ` +
    `a RoleBinding must grant verb "${rule.verb}" on resource "${rule.resource}" of API group "${rule.group}" (ClusterRole ${rule.clusterRole} does).`
  );
}
