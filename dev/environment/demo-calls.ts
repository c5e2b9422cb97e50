/**
 * What `dev` prints last: a `curl …:predict` that works, proven first by calling it. The calls go
 * through the gateway like a user's, and their `deployedModelId`s show the traffic split.
 */
import { fetch, type Dispatcher } from 'undici';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { isRecord, type KubeObject } from '../../src/api/common/kube-object.js';

/** A payment the demo fraud model scores (dev/models/demo/fraud-model.ts: its five features). */
export const DEMO_INSTANCE = {
  amount: 1250,
  hourOfDay: 3,
  foreignMerchant: true,
  cardPresent: false,
  transactionsLast24h: 9,
} as const;

export interface CallableEndpoint {
  readonly name: string;
  /** status.url: append :predict. */
  readonly url: string;
  readonly split: Readonly<Record<string, number>>;
}

/** The first endpoint of the namespace with a split whose every deployed model is Ready: the one worth calling. */
export function callableEndpoint(endpoints: readonly KubeObject[]): CallableEndpoint | undefined {
  for (const ep of endpoints) {
    const status = isRecord(ep.status) ? ep.status : {};
    const spec = isRecord(ep.spec) ? ep.spec : {};
    const split = isRecord(spec.trafficSplit) ? (spec.trafficSplit as Record<string, number>) : {};
    const models = Array.isArray(status.deployedModels)
      ? (status.deployedModels as { id?: string; ready?: string }[])
      : [];
    const ids = Object.keys(split).filter((id) => (split[id] ?? 0) > 0);
    if (typeof status.url !== 'string' || ids.length < 2) continue;
    if (!ids.every((id) => models.some((m) => m.id === id && m.ready === 'True'))) continue;
    return { name: ep.metadata.name ?? '', url: status.url, split };
  }
  return undefined;
}

export async function listEndpoints(client: KubeClient, namespace: string): Promise<KubeObject[]> {
  const list = await client.list(
    { group: 'prediction.endpoint-operator.dev', version: 'v1', plural: 'predictionendpoints', namespaced: true },
    namespace,
  );
  return list.items;
}

/** The header the printed curls send: the gateway authenticates every call (`export TOKEN=…` is printed first). */
export const CURL_AUTH_HEADER = `-H "Authorization: Bearer $TOKEN"`;
/** The gateway serves TLS from its own CA (`export GATEWAY_CA=…` is printed first). */
export const CURL_CA_OPTION = `--cacert "$GATEWAY_CA"`;
/** What the printed curls add to trust and authenticate to the gateway. */
export const CURL_GATEWAY_OPTIONS = `${CURL_CA_OPTION} ${CURL_AUTH_HEADER}`;

function jsonHeaders(token: string | undefined): Record<string, string> {
  return { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) };
}

/** One POST as the printed curl makes it: its HTTP status (0 when nothing answered). */
export async function tryCall(url: string, body: unknown, token?: string, dispatcher?: Dispatcher): Promise<number> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: jsonHeaders(token),
      body: JSON.stringify(body),
      ...(dispatcher === undefined ? {} : { dispatcher }),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** `calls` predictions through the gateway; how many each deployed model answered (failures under `error`). */
export async function sampleSplit(
  url: string,
  calls: number,
  token?: string,
  dispatcher?: Dispatcher,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (let i = 0; i < calls; i++) {
    let id = 'error';
    try {
      const res = await fetch(`${url}:predict`, {
        method: 'POST',
        headers: jsonHeaders(token),
        body: JSON.stringify({ instances: [DEMO_INSTANCE] }),
        ...(dispatcher === undefined ? {} : { dispatcher }),
      });
      const body = (await res.json()) as { deployedModelId?: unknown };
      if (res.ok && typeof body.deployedModelId === 'string') id = body.deployedModelId;
    } catch {
      // counted as an error
    }
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** The commands to print: one call, ten in a row counted by the deployed model that answered, and an :explain. */
export function curlLines(url: string, withToken = false): string[] {
  const body = JSON.stringify({ instances: [DEMO_INSTANCE] });
  const auth = withToken ? ` ${CURL_GATEWAY_OPTIONS}` : '';
  const call = `curl -s -X POST ${url}:predict -H 'content-type: application/json'${auth} -d '${body}'`;
  const endpoint = url.slice(url.indexOf('/v1/') + 4);
  const origin = new URL(url);
  return [
    `  ${call}`,
    `  curl -s -X POST ${url}:explain -H 'content-type: application/json'${auth} -d '${body}'`,
    '',
    '  # ten calls, counted by the deployed model that answered (the 70/30 split, exactly):',
    `  for i in $(seq 10); do ${call}; echo; done | grep -o '"deployedModelId":"[0-9]*"' | sort | uniq -c`,
    '',
    "  # Google's Python SDK, unchanged but for the address and credentials (pip install google-cloud-aiplatform):",
    ...pythonSnippet(`${origin.hostname}:${origin.port}`, endpoint),
  ];
}

/** The Python SDK's documented path, against the gateway: gRPC over TLS (its default), the CA named by the environment. */
export function pythonSnippet(apiEndpoint: string, endpointName: string): string[] {
  const instance = JSON.stringify(DEMO_INSTANCE).replace(/true/g, 'True').replace(/false/g, 'False');
  return [
    `  GRPC_DEFAULT_SSL_ROOTS_FILE_PATH="$GATEWAY_CA" REQUESTS_CA_BUNDLE="$GATEWAY_CA" python3 - <<'EOF'`,
    // The here-document's lines start at the margin: Python reads their indentation, the shell its closing EOF.
    'import os',
    'from google.cloud import aiplatform',
    'from google.oauth2.credentials import Credentials',
    `aiplatform.init(api_endpoint="${apiEndpoint}", credentials=Credentials(token=os.environ["TOKEN"]))`,
    `endpoint = aiplatform.Endpoint("${endpointName}")`,
    `print(endpoint.predict(instances=[${instance}]))`,
    'EOF',
  ];
}
