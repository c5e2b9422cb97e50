/**
 * The caller `npm start` prints curls for, now that the gateway authenticates: ServiceAccount
 * `demo-caller` in the demo namespace, bound there to the shipped caller ClusterRoles, and a token for
 * it minted by the TokenRequest API with the gateway's audience (what `kubectl create token demo-caller
 * --audience endpoint-operator-gateway` does).
 */
import { callerRoleManifests } from '../../src/deploy/caller-roles.js';
import {
  MODEL_DEPLOYER_ROLE,
  PREDICTION_CALLER_ROLE,
  REGISTRY_READER_ROLE,
} from '../../src/gateway/auth/attributes.js';
import { DEFAULT_AUDIENCE } from '../../src/gateway/auth/settings.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import type { KubeObject } from '../../src/api/common/kube-object.js';
import { applyObject } from './apply.js';

export const DEMO_CALLER = 'demo-caller';
/** It calls, resolves, and writes through Vertex's API (the printed Python snippet uploads and deploys). */
const DEMO_CALLER_ROLES = [PREDICTION_CALLER_ROLE, REGISTRY_READER_ROLE, MODEL_DEPLOYER_ROLE] as const;
const TOKEN_SECONDS = 24 * 3600;

function roleBinding(namespace: string, role: string): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `${DEMO_CALLER}-${role.replace(/^endpoint-operator-/, '')}`, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: DEMO_CALLER, namespace }],
  } as KubeObject;
}

/** Creates (or keeps) the account and its bindings; returns a token valid for a day. */
export async function demoCallerToken(client: KubeClient, namespace: string): Promise<string> {
  for (const role of callerRoleManifests()) await applyObject(client, role as KubeObject);
  await applyObject(client, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEMO_CALLER, namespace } });
  for (const role of DEMO_CALLER_ROLES) await applyObject(client, roleBinding(namespace, role));
  const answer = await client.createSubresource<{ status?: { token?: unknown } }>(
    { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true },
    namespace,
    DEMO_CALLER,
    'token',
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: [DEFAULT_AUDIENCE], expirationSeconds: TOKEN_SECONDS },
    },
  );
  const token = answer.status?.token;
  if (typeof token !== 'string' || token === '')
    throw new Error(`the TokenRequest for ServiceAccount ${namespace}/${DEMO_CALLER} returned no token`);
  return token;
}

/** The lines that tell how to call as demo-caller, and how to mint a new token. */
export function demoCallerLines(namespace: string, token: string): string[] {
  const request = JSON.stringify({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { audiences: [DEFAULT_AUDIENCE] },
  });
  return [
    '',
    `Calls to the gateway need a bearer token (auth is on): ServiceAccount ${DEMO_CALLER} in ${namespace}, bound to ClusterRoles ${DEMO_CALLER_ROLES.join(', ')}; this one is valid for 24 h:`,
    `  export TOKEN=${token}`,
    '  # a new one, with kubectl or with the TokenRequest API itself:',
    `  kubectl create token ${DEMO_CALLER} -n ${namespace} --audience ${DEFAULT_AUDIENCE}`,
    `  kubectl create --raw /api/v1/namespaces/${namespace}/serviceaccounts/${DEMO_CALLER}/token -f - <<< '${request}' | grep -o '"token":"[^"]*"' | cut -d'"' -f4`,
  ];
}
