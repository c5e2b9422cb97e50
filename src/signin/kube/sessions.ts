import { MAX_PREVIOUS_TOKEN_HASHES, type SignInSessionSpec } from '../../api/pos/v1/index.js';
import { isConflict, isNotFound } from '../../runtime/api-error.js';
import type { KubeClient } from '../../runtime/kube-client.js';
import type { KubeObject } from '../../runtime/kube-object.js';
import type { Clock } from '../clock.js';
import type { SessionData, SessionRecord, SessionStore } from '../sessions.js';
import { posResources, SIGNIN_FIELD_MANAGER } from './resources.js';

const API_VERSION = 'pos.endpoint-operator.dev/v1';
const LABEL_SUBJECT_KIND = 'pos.endpoint-operator.dev/subject-kind';
const LABEL_SUBJECT_NAME = 'pos.endpoint-operator.dev/subject-name';
const LABEL_PURPOSE = 'pos.endpoint-operator.dev/purpose';

function toObject(data: SessionData, resourceVersion?: string): KubeObject {
  const spec: SignInSessionSpec = {
    purpose: data.purpose,
    subject: { kind: data.subject.kind, name: data.subject.name },
    tokenHash: data.tokenHash,
    previousTokenHashes: data.previousTokenHashes.slice(0, MAX_PREVIOUS_TOKEN_HASHES),
    expiresAt: new Date(data.expiresAt).toISOString(),
    revoked: data.revoked,
    ...(data.revokedReason === undefined ? {} : { revokedReason: data.revokedReason }),
  };
  return {
    apiVersion: API_VERSION,
    kind: 'SignInSession',
    metadata: {
      name: data.id,
      labels: { [LABEL_SUBJECT_KIND]: data.subject.kind, [LABEL_SUBJECT_NAME]: data.subject.name.slice(0, 63), [LABEL_PURPOSE]: data.purpose },
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    },
    spec,
  };
}

function fromObject(obj: KubeObject): SessionRecord | undefined {
  const spec = obj.spec as Partial<SignInSessionSpec> | undefined;
  const id = obj.metadata.name;
  const version = obj.metadata.resourceVersion;
  if (!spec || id === undefined || version === undefined || spec.subject === undefined || spec.tokenHash === undefined || spec.expiresAt === undefined) return undefined;
  if (spec.purpose !== 'refresh' && spec.purpose !== 'shop-selection') return undefined;
  const expiresAt = Date.parse(spec.expiresAt);
  if (Number.isNaN(expiresAt)) return undefined;
  return {
    id,
    version,
    purpose: spec.purpose,
    subject: { kind: spec.subject.kind, name: spec.subject.name },
    tokenHash: spec.tokenHash,
    previousTokenHashes: spec.previousTokenHashes ?? [],
    expiresAt,
    revoked: spec.revoked ?? false,
    ...(spec.revokedReason === undefined ? {} : { revokedReason: spec.revokedReason }),
  };
}

/**
 * SignInSessions as the shared session store of every replica. A rotation is a PUT carrying the
 * resourceVersion it read: the apiserver refuses it with 409 Conflict if anyone (this replica or
 * another) wrote in between, which is what makes refresh-token reuse detection hold across replicas.
 */
export class KubernetesSessionStore implements SessionStore {
  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
  ) {}

  async create(data: SessionData): Promise<SessionRecord> {
    const created = await this.client.create<KubeObject>(posResources.signInSessions, this.namespace, toObject(data), { fieldManager: SIGNIN_FIELD_MANAGER });
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
      const replaced = await this.client.replace<KubeObject>(posResources.signInSessions, this.namespace, expected.id, body, { fieldManager: SIGNIN_FIELD_MANAGER });
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

  /** Deletes sessions past their expiry (revoked ones are kept until then, so a late replay is still recognised). */
  async sweepExpired(clock: Clock): Promise<number> {
    let removed = 0;
    let cont: string | undefined;
    do {
      const page = await this.client.list<KubeObject>(posResources.signInSessions, this.namespace, { limit: 500, ...(cont ? { continue: cont } : {}) });
      for (const obj of page.items) {
        const rec = fromObject(obj);
        if (rec && rec.expiresAt <= clock.now() && (await this.delete(rec.id))) removed++;
      }
      cont = page.continue;
    } while (cont);
    return removed;
  }
}
