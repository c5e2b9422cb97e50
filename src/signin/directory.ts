import type { AccountStatus, AdminRole, SecretKeySelector, ShopRole } from '../api/pos/v1/index.js';
import type { Argon2Params } from './passwords.js';
import type { Subject } from './tokens.js';

/** A Shop as the sign-in API sees it: the id is the Shop's metadata.name. */
export interface ShopEntry {
  readonly id: string;
  readonly name: string;
  readonly code: string;
}

export interface MembershipEntry {
  readonly shopId: string;
  readonly role: ShopRole;
  readonly displayName?: string;
  readonly employeeCode?: string;
}

export interface ShopUserEntry {
  readonly kind: 'ShopUser';
  readonly id: string;
  readonly email: string;
  readonly displayName: string;
  readonly status: AccountStatus;
  readonly passwordSecretRef: SecretKeySelector;
  readonly memberships: readonly MembershipEntry[];
}

export interface AdminUserEntry {
  readonly kind: 'AdminUser';
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly role: AdminRole;
  readonly status: AccountStatus;
  readonly passwordSecretRef: SecretKeySelector;
}

export type Identity = ShopUserEntry | AdminUserEntry;

/**
 * `unknown`: no identity has the email; `ambiguous`: several do, and none may sign in until the
 * clash is resolved (picking one would let whoever wrote the second object take over the first).
 */
export type EmailLookup =
  { readonly outcome: 'found'; readonly identity: Identity } | { readonly outcome: 'unknown' | 'ambiguous' };

/**
 * What the sign-in core needs to know about shops and users. Implementations answer from memory
 * (the Kubernetes one from its watch cache), so a login never waits on the apiserver to read.
 */
export interface IdentityDirectory {
  lookupEmail(email: string): EmailLookup;
  /** The identity behind a token's subject, or undefined when removed or when its email is now ambiguous. */
  identity(subject: Subject): Identity | undefined;
  shop(id: string): ShopEntry | undefined;
  /** The PHC string in the referenced Secret key, if the Secret and key exist. */
  passwordHash(ref: SecretKeySelector): string | undefined;
  /** The parameters of the costliest argon2id hash any identity uses (for the dummy verification of unknown emails). */
  strongestPasswordParams(): Argon2Params | undefined;
  /** Every email held by more than one identity, with the holders (for status reporting). */
  duplicateEmails(): ReadonlyMap<string, readonly Subject[]>;
  /** Called after every change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

export function isActive(identity: Identity): boolean {
  return identity.status === 'active';
}

/** The identity's membership of `shopId` whose Shop still exists, if any. */
export function membershipOf(
  directory: IdentityDirectory,
  user: ShopUserEntry,
  shopId: string,
): { membership: MembershipEntry; shop: ShopEntry } | undefined {
  const membership = user.memberships.find((m) => m.shopId === shopId);
  const shop = membership ? directory.shop(shopId) : undefined;
  return membership && shop ? { membership, shop } : undefined;
}

/** Memberships whose Shop exists, in declaration order: a membership of a missing Shop grants nothing. */
export function activeMemberships(
  directory: IdentityDirectory,
  user: ShopUserEntry,
): { membership: MembershipEntry; shop: ShopEntry }[] {
  return user.memberships.flatMap((m) => {
    const shop = directory.shop(m.shopId);
    return shop ? [{ membership: m, shop }] : [];
  });
}
