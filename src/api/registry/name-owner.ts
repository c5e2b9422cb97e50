/**
 * One owner per Service Directory name. RegistryServices in different namespaces may claim the same
 * `spec.name`; the oldest claim (creationTimestamp, then namespace, then name: a total order every
 * replica computes alike) owns the name and is the one lookups resolve. Every claimant is reported
 * (Ready=False, NameConflict) so the clash is visible on both sides, and when the owner goes away the
 * next oldest takes over without anyone editing anything.
 */

export interface NameClaimant {
  readonly metadata: {
    readonly namespace?: string;
    readonly name?: string;
    readonly creationTimestamp?: string;
    readonly uid?: string;
  };
}

/** Older first; ties (same second) broken by namespace, then name. */
export function claimOrder(a: NameClaimant, b: NameClaimant): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const na = `${a.metadata.namespace ?? ''}/${a.metadata.name ?? ''}`;
  const nb = `${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

export interface NameClaims<T extends NameClaimant> {
  /** The claimant that owns the name (the oldest), or undefined when nobody claims it. */
  readonly owner: T | undefined;
  /** The other claimants, older first. */
  readonly others: readonly T[];
}

/** Splits the claimants of one name into its owner and the rest. */
export function nameClaims<T extends NameClaimant>(claimants: readonly T[]): NameClaims<T> {
  const sorted = [...claimants].sort(claimOrder);
  return { owner: sorted[0], others: sorted.slice(1) };
}
