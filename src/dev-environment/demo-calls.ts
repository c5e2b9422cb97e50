/**
 * What `dev` prints last: a `curl …:predict` that works, proven first by calling it. The calls go
 * through the gateway like a user's, and their `deployedModelId`s show the traffic split.
 */
import type { KubeClient } from '../kube/kube-client.js';
import { isRecord, type KubeObject } from '../api/common/kube-object.js';

/** A payment the demo fraud model scores (src/demo-models/fraud-model.ts: its five features). */
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

function jsonHeaders(token: string | undefined): Record<string, string> {
  return { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) };
}

/** One POST as the printed curl makes it: its HTTP status (0 when nothing answered). */
export async function tryCall(url: string, body: unknown, token?: string): Promise<number> {
  try {
    const res = await fetch(url, { method: 'POST', headers: jsonHeaders(token), body: JSON.stringify(body) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** `calls` predictions through the gateway; how many each deployed model answered (failures under `error`). */
export async function sampleSplit(url: string, calls: number, token?: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (let i = 0; i < calls; i++) {
    let id = 'error';
    try {
      const res = await fetch(`${url}:predict`, {
        method: 'POST',
        headers: jsonHeaders(token),
        body: JSON.stringify({ instances: [DEMO_INSTANCE] }),
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
  const auth = withToken ? ` ${CURL_AUTH_HEADER}` : '';
  const call = `curl -s -X POST ${url}:predict -H 'content-type: application/json'${auth} -d '${body}'`;
  return [
    `  ${call}`,
    `  curl -s -X POST ${url}:explain -H 'content-type: application/json'${auth} -d '${body}'`,
    '',
    '  # ten calls, counted by the deployed model that answered (the 70/30 split, exactly):',
    `  for i in $(seq 10); do ${call}; echo; done | grep -o '"deployedModelId":"[0-9]*"' | sort | uniq -c`,
  ];
}
