/**
 * The keys of a traffic split that name no deployed model of the endpoint, sorted. The reconciler
 * reports them as `Ready=False` / `TrafficSplitUnresolved` rather than the webhook refusing the
 * split, because a GitOps tool may apply the endpoint before its DeployedModels.
 */
export function trafficSplitProblems(
  split: Readonly<Record<string, number>> | undefined,
  deployedIds: Iterable<string>,
): string[] {
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
