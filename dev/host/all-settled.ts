/**
 * Steps started together, awaited together: every one is settled before the first failure is thrown, so a failed
 * step never leaves another still starting behind the clean-up that follows.
 */
export async function allSettledOrThrow<T extends readonly unknown[]>(
  steps: readonly [...T],
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const results = await Promise.allSettled(steps);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return results.map((r) => (r.status === 'fulfilled' ? r.value : undefined)) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}
