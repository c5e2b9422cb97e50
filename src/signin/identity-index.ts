import {
  adminUserSpecSchema,
  shopSpecSchema,
  shopUserSpecSchema,
  type SecretKeySelector,
} from '../api/pos/v1/index.js';
import type {
  AdminUserEntry,
  EmailLookup,
  Identity,
  IdentityDirectory,
  ShopEntry,
  ShopUserEntry,
} from './directory.js';
import { hashCost, parsePhc, type Argon2Params } from './passwords.js';
import type { Subject, SubjectKind } from './tokens.js';

/** The parts of a Kubernetes object the index reads; anything else is ignored. */
export interface ObjectLike {
  readonly metadata?: { readonly name?: string };
  readonly spec?: unknown;
  readonly data?: unknown;
}

/**
 * An in-memory IdentityDirectory built from Shop, ShopUser, AdminUser and Secret objects as the
 * apiserver returns them. The Kubernetes adapter feeds it watch events; tests feed it objects.
 * An object whose spec fails its schema is left out (it could not have passed admission, and
 * refusing sign-in is the safe reading of a spec nobody validated).
 */
export class IdentityIndex implements IdentityDirectory {
  private readonly shops = new Map<string, ShopEntry>();
  private readonly identities = new Map<string, Identity>(); // key `${kind}/${name}`
  private readonly byEmail = new Map<string, Set<string>>();
  private readonly secrets = new Map<string, Record<string, unknown>>();
  private readonly listeners = new Set<() => void>();
  /** Cached answer of strongestPasswordParams; recomputed after a change. */
  private strongest: Argon2Params | undefined | 'stale' = 'stale';

  upsertShop(obj: ObjectLike): void {
    const id = obj.metadata?.name;
    if (id === undefined) return;
    const parsed = shopSpecSchema.safeParse(obj.spec);
    if (parsed.success) this.shops.set(id, { id, name: parsed.data.displayName, code: parsed.data.code });
    else this.shops.delete(id);
    this.changed();
  }

  removeShop(name: string): void {
    if (this.shops.delete(name)) this.changed();
  }

  upsertShopUser(obj: ObjectLike): void {
    const id = obj.metadata?.name;
    if (id === undefined) return;
    const parsed = shopUserSpecSchema.safeParse(obj.spec);
    if (!parsed.success) return this.removeIdentity('ShopUser', id);
    const s = parsed.data;
    const entry: ShopUserEntry = {
      kind: 'ShopUser',
      id,
      email: s.email.toLowerCase(),
      displayName: s.displayName,
      status: s.status,
      passwordSecretRef: s.passwordSecretRef,
      memberships: s.memberships.map((m) => ({
        shopId: m.shop,
        role: m.role,
        ...(m.profile?.displayName === undefined ? {} : { displayName: m.profile.displayName }),
        ...(m.profile?.employeeCode === undefined ? {} : { employeeCode: m.profile.employeeCode }),
      })),
    };
    this.setIdentity(entry);
  }

  upsertAdminUser(obj: ObjectLike): void {
    const id = obj.metadata?.name;
    if (id === undefined) return;
    const parsed = adminUserSpecSchema.safeParse(obj.spec);
    if (!parsed.success) return this.removeIdentity('AdminUser', id);
    const s = parsed.data;
    const entry: AdminUserEntry = {
      kind: 'AdminUser',
      id,
      email: s.email.toLowerCase(),
      name: s.name,
      role: s.role,
      status: s.status,
      passwordSecretRef: s.passwordSecretRef,
    };
    this.setIdentity(entry);
  }

  removeIdentity(kind: SubjectKind, name: string): void {
    const key = `${kind}/${name}`;
    const old = this.identities.get(key);
    if (!old) return;
    this.identities.delete(key);
    this.unindexEmail(old.email, key);
    this.changed();
  }

  upsertSecret(obj: ObjectLike): void {
    const name = obj.metadata?.name;
    if (name === undefined) return;
    const data = obj.data;
    this.secrets.set(
      name,
      typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {},
    );
    this.changed();
  }

  removeSecret(name: string): void {
    if (this.secrets.delete(name)) this.changed();
  }

  lookupEmail(email: string): EmailLookup {
    const keys = this.byEmail.get(email.trim().toLowerCase());
    if (!keys || keys.size === 0) return { outcome: 'unknown' };
    if (keys.size > 1) return { outcome: 'ambiguous' };
    const [key] = keys;
    const identity = key === undefined ? undefined : this.identities.get(key);
    return identity ? { outcome: 'found', identity } : { outcome: 'unknown' };
  }

  identity(subject: Subject): Identity | undefined {
    const identity = this.identities.get(`${subject.kind}/${subject.name}`);
    if (!identity) return undefined;
    return (this.byEmail.get(identity.email)?.size ?? 0) === 1 ? identity : undefined;
  }

  shop(id: string): ShopEntry | undefined {
    return this.shops.get(id);
  }

  passwordHash(ref: SecretKeySelector): string | undefined {
    const value = this.secrets.get(ref.name)?.[ref.key];
    if (typeof value !== 'string') return undefined;
    // Secret data is base64 (the apiserver always returns `data`, never `stringData`).
    return Buffer.from(value, 'base64').toString('utf8').trim();
  }

  strongestPasswordParams(): Argon2Params | undefined {
    if (this.strongest === 'stale') {
      let best: Argon2Params | undefined;
      for (const identity of this.identities.values()) {
        const phc = this.passwordHash(identity.passwordSecretRef);
        const p = phc === undefined ? undefined : parsePhc(phc);
        if (p && (!best || hashCost(p) > hashCost(best))) best = p;
      }
      this.strongest = best;
    }
    return this.strongest;
  }

  duplicateEmails(): ReadonlyMap<string, readonly Subject[]> {
    const out = new Map<string, Subject[]>();
    for (const [email, keys] of this.byEmail) {
      if (keys.size < 2) continue;
      out.set(
        email,
        [...keys].map((k) => {
          const [kind, name] = k.split('/') as [SubjectKind, string];
          return { kind, name };
        }),
      );
    }
    return out;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private setIdentity(entry: Identity): void {
    const key = `${entry.kind}/${entry.id}`;
    const old = this.identities.get(key);
    if (old && old.email !== entry.email) this.unindexEmail(old.email, key);
    this.identities.set(key, entry);
    let holders = this.byEmail.get(entry.email);
    if (!holders) this.byEmail.set(entry.email, (holders = new Set()));
    holders.add(key);
    this.changed();
  }

  private unindexEmail(email: string, key: string): void {
    const holders = this.byEmail.get(email);
    holders?.delete(key);
    if (holders?.size === 0) this.byEmail.delete(email);
  }

  private changed(): void {
    this.strongest = 'stale';
    for (const l of this.listeners) {
      try {
        l();
      } catch {
        // a listener's failure must not stop the index from serving
      }
    }
  }
}
