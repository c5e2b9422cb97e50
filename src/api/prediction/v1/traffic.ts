import { createHash } from 'node:crypto';

/**
 * The keys of a traffic split that name no deployed model of the endpoint, sorted. The reconciler
 * reports them as `Ready=False` / `TrafficSplitUnresolved` rather than the webhook refusing the
 * split, because a GitOps tool may apply the endpoint before its DeployedModels.
 */
export function trafficSplitProblems(split: Readonly<Record<string, number>> | undefined, deployedIds: Iterable<string>): string[] {
  if (split === undefined) return [];
  const deployed = new Set(deployedIds);
  return Object.keys(split)
    .filter((id) => !deployed.has(id))
    .sort(compareIds);
}

/** Orders deployed-model ids numerically (they are digit strings of different lengths). */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * Ids are drawn from the 10-digit range without a leading zero, so every assigned id has the same
 * length (readable in `kubectl get`) and is valid under the 1–10 digit rule.
 */
const ID_MIN = 1_000_000_000n;
const ID_SPAN = 9_000_000_000n;

/**
 * A deployed-model id not in `usedIds`, chosen deterministically from `seed` (for example the
 * DeployedModel's metadata.uid), so a reconciler that crashes between choosing an id and writing
 * it picks the same one again. Collisions are resolved by linear probing over the 9·10⁹ ids.
 */
export function nextDeployedModelId(usedIds: Iterable<string>, seed: string): string {
  const used = new Set(usedIds);
  const digest = createHash('sha256').update(seed).digest();
  const start = digest.readBigUInt64BE(0) % ID_SPAN;
  // The used set is finite, so at most used.size + 1 probes are needed.
  for (let probe = 0n; probe <= BigInt(used.size); probe++) {
    const candidate = (ID_MIN + ((start + probe) % ID_SPAN)).toString();
    if (!used.has(candidate)) return candidate;
  }
  throw new Error('every deployed-model id is in use');
}
