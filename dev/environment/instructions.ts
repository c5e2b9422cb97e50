/**
 * What `npm start` prints once the examples have converged: how to point kubectl at the cluster, the operator's
 * ports, the sign-in API with a demo user's login, the demo caller's token, and calls through the gateway, each
 * proven by making it before it is printed.
 */
import { dirname } from 'node:path';
import type { Dispatcher } from 'undici';
import type { KubeClient, KubeObject } from '../../src/kube/kube-client.js';
import { GATEWAY_CA_CONFIGMAP } from '../../src/operator/gateway-ca-configmaps.js';
import type { ControlPlane } from '../cluster/index.js';
import { demoCallerLines } from './demo-caller.js';
import {
  callableEndpoint,
  CURL_GATEWAY_OPTIONS,
  curlLines,
  DEMO_INSTANCE,
  listEndpoints,
  sampleSplit,
  tryCall,
} from './demo-calls.js';
import { ensurePythonPackages } from '../models/python-packages.js';
import {
  callRealModel,
  REAL_MODEL_ARTIFACT,
  REAL_NODE_MACHINE_TYPE,
  realModelEndpoint,
  realModelLines,
} from './real-node-model.js';
import { projectAndLocation, sdkSnippetLines } from './sdk-snippet.js';
import { demoResolveCall, registryLookupLines } from './registry-lines.js';
import { servingLines } from './serving-lines.js';

export interface RunningEnvironment {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly kubeconfig: string;
  readonly plane: ControlPlane | undefined;
  readonly objects: readonly KubeObject[];
  readonly operator: { readonly metricsPort: number | undefined; readonly healthPort: number | undefined };
  readonly logFile: string;
  readonly signinUrl: string | undefined;
  readonly login: { readonly password: string; readonly users: readonly { email: string; kind: string }[] } | undefined;
  readonly gateway: { readonly url: string; readonly caFile: string; readonly client: Dispatcher };
  /** The demo caller's ServiceAccount token, which every printed gateway call carries. */
  readonly token: string;
  readonly realModel: { readonly image: string; readonly expected: readonly number[] } | undefined;
  readonly say: (line: string) => void;
}

export function clusterLines(env: RunningEnvironment): string[] {
  const { plane, namespace } = env;
  return [
    '',
    'Point kubectl at it:',
    `  export KUBECONFIG=${env.kubeconfig}`,
    ...(plane !== undefined
      ? [`  export PATH=${dirname(plane.kubectl)}:$PATH   # kubectl ${plane.version}, built with the cluster`]
      : []),
    `  kubectl get endpoint-operator -n ${namespace}`,
    `  kubectl get pe,dm,registryservices,registryendpoints -n ${namespace}`,
    '',
    `Operator: metrics http://127.0.0.1:${env.operator.metricsPort ?? '?'}/metrics, health http://127.0.0.1:${env.operator.healthPort ?? '?'}/readyz, logs ${env.logFile}`,
  ];
}

export function signinLines(env: RunningEnvironment): string[] {
  const url = env.signinUrl;
  if (!url) return [];
  const lines = ['', `Sign-in API: ${url} (OpenAPI: ${url}/openapi.json)`];
  const shopUser = env.login?.users.find((u) => u.kind === 'ShopUser');
  if (env.login !== undefined && shopUser !== undefined) {
    lines.push(
      `Demo users (${env.login.users.map((u) => u.email).join(', ')}) have the password: ${env.login.password}`,
      '',
      `  curl -s -X POST ${url}/auth/pos/login -H 'content-type: application/json' \\`,
      `    -d '{"email":"${shopUser.email}","password":"${env.login.password}"}'`,
    );
  }
  return lines;
}

/** The gateway's lines: its CA, a :predict proven by ten calls and an :explain, the serving and the registry. */
export async function gatewayLines(env: RunningEnvironment): Promise<string[]> {
  const { client, namespace, token, gateway } = env;
  const lines = [
    ...demoCallerLines(namespace, token),
    '',
    `The gateway's certificate is issued by the operator's CA (in every namespace as ConfigMap ${GATEWAY_CA_CONFIGMAP}):`,
    `  export GATEWAY_CA=${gateway.caFile}`,
  ];
  const callable = callableEndpoint(await listEndpoints(client, namespace));
  if (callable !== undefined) {
    // Proven before it is printed: ten calls through the gateway, counted by the model that answered, and an :explain.
    const counts = await sampleSplit(callable.url, 10, token, gateway.client);
    const seen = [...counts].map(([id, n]) => `${n} × ${id}`).join(', ');
    const explained = await tryCall(`${callable.url}:explain`, { instances: [DEMO_INSTANCE] }, token, gateway.client);
    lines.push(
      '',
      `Prediction gateway: ${gateway.url} (PredictionEndpoint ${callable.name}: split ${JSON.stringify(callable.split)}; 10 calls just now: ${seen}; :explain answered ${explained})`,
      ...curlLines(callable.url, true),
    );
  } else {
    lines.push(
      '',
      `Prediction gateway: ${gateway.url} (no endpoint with a split over ready models yet: kubectl get pe,dm -n ${namespace})`,
    );
  }
  const models = await client.list(
    { group: 'prediction.endpoint-operator.dev', version: 'v1', plural: 'deployedmodels', namespaced: true },
    namespace,
  );
  lines.push(...servingLines(models.items, env.realModel !== undefined));
  const target = env.realModel && realModelEndpoint(await listEndpoints(client, namespace), models.items);
  if (env.realModel !== undefined && target !== undefined) {
    const answer = await callRealModel(target.url, token, gateway.client);
    lines.push(...realModelLines(target, env.realModel.image, answer, env.realModel.expected));
    const where = projectAndLocation(target.url);
    if (where !== undefined)
      lines.push(
        ...sdkSnippetLines({
          apiEndpoint: new URL(gateway.url).host,
          ...where,
          image: env.realModel.image,
          artifactUri: REAL_MODEL_ARTIFACT,
          machineType: REAL_NODE_MACHINE_TYPE,
          python: await ensurePythonPackages('aiplatform-sdk', env.say),
        }),
      );
  }
  const resolveCall = demoResolveCall(gateway.url, env.objects);
  if (resolveCall !== undefined)
    env.say(
      `resolve of ${resolveCall.name} as ${namespace}/demo-caller answered ${await tryCall(resolveCall.url, resolveCall.body, token, gateway.client)}`,
    );
  lines.push(...registryLookupLines(gateway.url, env.objects, namespace, CURL_GATEWAY_OPTIONS));
  return lines;
}
