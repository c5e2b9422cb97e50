import { MAX_PREVIOUS_TOKEN_HASHES, type SignInSessionSpec } from '../../api/pos/v1/index.js';
import { isConflict, isNotFound } from '../../kube/api-error.js';
import { Informer, kubeListerWatcher } from '../../kube/informer.js';
import type { KubeClient } from '../../kube/kube-client.js';
import type { Logger } from '../../base/logger.js';
import type { KubeObject } from '../../api/common/kube-object.js';
import { realClock, type Clock } from '../../base/clock.js';
import { activeFamiliesOf, type SessionData, type SessionRecord, type SessionStore } from '../sessions.js';
import type { Subject } from '../tokens.js';
import { posResources, SIGNIN_FIELD_MANAGER } from './resources.js';

const API_VERSION = 'pos.endpoint-operator.dev/v1';
const LABEL_SUBJECT_KIND = 'pos.endpoint-operator.dev/subject-kind';
const LABEL_SUBJECT_NAME = 'pos.endpoint-operator.dev/subject-name';
const LABEL_PURPOSE = 'pos.endpoint-operator.dev/purpose';

function toObject(data: SessionData, resourceVersion?: string): KubeObject {
  const spec: SignInSessionSpec = {
    purpose: data.purpose,
    subject: { kind: data.subject.kind, name: data.subject.name },
    audience: data.audience,
    tokenHash: data.tokenHash,
    previousTokenHashes: data.previousTokenHashes.slice(0, MAX_PREVIOUS_TOKEN_HASHES),
    expiresAt: new Date(data.expiresAt).toISOString(),
    revoked: data.revoked,
    ...(data.revokedReason === undefined ? {} : { revokedReason: data.revokedReason }),
    ...(data.revokedAt === undefined ? {} : { revokedAt: new Date(data.revokedAt).toISOString() }),
  };
  return {
    apiVersion: API_VERSION,
    kind: 'SignInSession',
    metadata: {
      name: data.id,
      labels: {
        [LABEL_SUBJECT_KIND]: data.subject.kind,
        [LABEL_SUBJECT_NAME]: data.subject.name.slice(0, 63),
        [LABEL_PURPOSE]: data.purpose,
      },
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    },
    spec,
  };
}

export function fromObject(obj: KubeObject): SessionRecord | undefined {
  const spec = obj.spec as Partial<SignInSessionSpec> | undefined;
  const id = obj.metadata.name;
  const version = obj.metadata.resourceVersion;
  if (
    !spec ||
    id === undefined ||
    version === undefined ||
    spec.subject === undefined ||
    spec.tokenHash === undefined ||
    spec.expiresAt === undefined
  )
    return undefined;
  if (spec.purpose !== 'refresh' && spec.purpose !== 'shop-selection') return undefined;
  const expiresAt = Date.parse(spec.expiresAt);
  if (Number.isNaN(expiresAt)) return undefined;
  return {
    id,
    version,
    purpose: spec.purpose,
    subject: { kind: spec.subject.kind, name: spec.subject.name },
    // Families written before audiences existed: an admin's are admin, a shop user's the till's.
    audience: spec.audience ?? (spec.subject.kind === 'AdminUser' ? 'admin' : 'pos'),
    tokenHash: spec.tokenHash,
    previousTokenHashes: spec.previousTokenHashes ?? [],
    expiresAt,
    revoked: spec.revoked ?? false,
    ...(spec.revokedReason === undefined ? {} : { revokedReason: spec.revokedReason }),
    ...(spec.revokedAt === undefined || Number.isNaN(Date.parse(spec.revokedAt))
      ? {}
      : { revokedAt: Date.parse(spec.revokedAt) }),
  };
}

/**
 * SignInSessions as the shared session store of every replica. A rotation is a PUT carrying the
 * resourceVersion it read: the apiserver refuses it with 409 Conflict if anyone (this replica or
 * another) wrote in between, which is what makes refresh-token reuse detection hold across replicas.
 *
 * Revocation is read from a watch of the refresh families (`isRevoked`), so every authenticated
 * request checks it without an API call, and a logout or a detected reuse on one replica reaches
 * the others as fast as the watch delivers the update. A revoked family is kept until its last
 * access token has expired (`revokedAt` + the access-token lifetime) so a replica that starts
 * meanwhile still sees it; a family deleted while this replica watched is remembered as long.
 */
export class KubernetesSessionStore implements SessionStore {
  readonly families: Informer;
  private readonly deleted = new Map<string, number>(); // id → until when it stays refused (ms)

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly options: {
      readonly clock?: Clock;
      readonly accessTokenTtlMs?: number;
      readonly logger?: Logger;
    } = {},
  ) {
    this.families = new Informer(
      kubeListerWatcher(client, posResources.signInSessions, namespace, { labelSelector: `${LABEL_PURPOSE}=refresh` }),
      {
        name: `signinsessions in ${namespace}`,
        ...(options.logger ? { logger: options.logger } : {}),
      },
    );
    this.families.addEventHandler({
      onDelete: (obj) => {
        const id = obj.metadata.name;
        if (id === undefined) return;
        const now = this.now();
        // Forget the families whose access tokens have all expired (insertion order is expiry order).
        for (const [old, until] of this.deleted) {
          if (until > now) break;
          this.deleted.delete(old);
        }
        this.deleted.set(id, now + this.accessTtlMs());
      },
    });
  }

  /** Watches the refresh families until `signal` aborts; resolves once listed (false if aborted first). */
  start(signal: AbortSignal): Promise<boolean> {
    void this.families.run(signal);
    return this.families.waitForSync(signal);
  }

  isRevoked(id: string): boolean {
    const obj = this.families.get(this.namespace, id);
    if (obj) return (obj.spec as Partial<SignInSessionSpec> | undefined)?.revoked === true;
    const until = this.deleted.get(id);
    if (until === undefined) return false; // not seen yet: created a moment ago on another replica
    if (until > this.now()) return true;
    this.deleted.delete(id);
    return false;
  }

  activeFamilies(subject: Subject, now: number): SessionRecord[] {
    return activeFamiliesOf(
      this.families.list(this.namespace).flatMap((o) => fromObject(o) ?? []),
      subject,
      now,
    );
  }

  /** Refresh families in the watch cache by state, for the `signin_sessions` gauge. */
  countFamilies(): { active: number; revoked: number; expired: number } {
    const counts = { active: 0, revoked: 0, expired: 0 };
    const now = this.now();
    for (const obj of this.families.list(this.namespace)) {
      const r = fromObject(obj);
      if (!r) continue;
      if (r.revoked) counts.revoked++;
      else if (r.expiresAt <= now) counts.expired++;
      else counts.active++;
    }
    return counts;
  }

  private now(): number {
    return (this.options.clock ?? realClock).now();
  }

  private accessTtlMs(): number {
    return this.options.accessTokenTtlMs ?? 15 * 60_000;
  }

  async create(data: SessionData): Promise<SessionRecord> {
    const created = await this.client.create<KubeObject>(posResources.signInSessions, this.namespace, toObject(data), {
      fieldManager: SIGNIN_FIELD_MANAGER,
    });
    const rec = fromObject(created);
    if (!rec) throw new Error(`the apiserver returned an unreadable SignInSession ${data.id}`);
    return rec;
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const obj = await this.client.get<KubeObject>(posResources.signInSessions, this.namespace, id);
    return obj ? fromObject(obj) : undefined;
  }

  async compareAndSwap(expected: SessionRecord, next: SessionData): Promise<SessionRecord | 'conflict' | 'gone'> {
    try {
      const body = toObject({ ...next, id: expected.id }, expected.version);
      const replaced = await this.client.replace<KubeObject>(
        posResources.signInSessions,
        this.namespace,
        expected.id,
        body,
        { fieldManager: SIGNIN_FIELD_MANAGER },
      );
      return fromObject(replaced) ?? 'gone';
    } catch (err) {
      if (isConflict(err)) return 'conflict';
      if (isNotFound(err)) return 'gone';
      throw err;
    }
  }

  async delete(id: string): Promise<boolean> {
    try {
      return await this.client.delete(posResources.signInSessions, this.namespace, id);
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /**
   * Deletes sessions past their expiry, and revoked families once their access tokens have expired
   * (a replay of their refresh token then finds nothing and gets the same 401). Shop selections are
   * listed (they are not watched); refresh families are read from the watch cache when it runs.
   */
  async sweepExpired(clock: Clock): Promise<number> {
    const accessTtl = this.accessTtlMs();
    const done = (r: SessionRecord): boolean =>
      r.expiresAt <= clock.now() || (r.revoked && (r.revokedAt ?? 0) + accessTtl <= clock.now());
    const candidates: SessionRecord[] = [];
    // Refresh families from the watch cache when it runs (no list call), else from a list like the selections.
    const purposes = this.families.hasSynced() ? ['shop-selection'] : ['shop-selection', 'refresh'];
    if (this.families.hasSynced())
      candidates.push(...this.families.list(this.namespace).flatMap((o) => fromObject(o) ?? []));
    for (const purpose of purposes) {
      let cont: string | undefined;
      do {
        const page = await this.client.list<KubeObject>(posResources.signInSessions, this.namespace, {
          labelSelector: `${LABEL_PURPOSE}=${purpose}`,
          limit: 500,
          ...(cont ? { continue: cont } : {}),
        });
        candidates.push(...page.items.flatMap((o) => fromObject(o) ?? []));
        cont = page.continue;
      } while (cont);
    }
    let removed = 0;
    for (const rec of candidates) if (done(rec) && (await this.delete(rec.id))) removed++;
    return removed;
  }
}
