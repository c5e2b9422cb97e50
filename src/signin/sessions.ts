import type { RevokedReason, SessionPurpose } from '../api/pos/v1/index.js';
import type { Audience, Subject } from './tokens.js';

export type { RevokedReason };

/** One SignInSession: a refresh-token family, or a pending POS shop selection. Hashes only. */
export interface SessionData {
  readonly id: string;
  readonly purpose: SessionPurpose;
  readonly subject: Subject;
  /** The `aud` of the family's access tokens (refresh families; shop selections are always `pos`). */
  readonly audience: Audience;
  readonly tokenHash: string;
  /** Superseded refresh-token hashes, newest first. */
  readonly previousTokenHashes: readonly string[];
  readonly expiresAt: number; // ms since the epoch
  readonly revoked: boolean;
  readonly revokedReason?: RevokedReason;
  readonly revokedAt?: number; // ms since the epoch
}

export interface SessionRecord extends SessionData {
  /** Opaque concurrency token (the resourceVersion in Kubernetes): a write succeeds only if unchanged. */
  readonly version: string;
}

/**
 * Shared session storage. Every replica sees the same records, and `compareAndSwap` is the only
 * way to change one, so two replicas rotating the same token cannot both succeed.
 */
export interface SessionStore {
  create(data: SessionData): Promise<SessionRecord>;
  get(id: string): Promise<SessionRecord | undefined>;
  /** Replaces the record only if it still has `expected.version`; `conflict` when someone wrote first, `gone` when deleted. */
  compareAndSwap(expected: SessionRecord, next: SessionData): Promise<SessionRecord | 'conflict' | 'gone'>;
  /** Deletes the record; true for exactly one caller however many race (single-use tokens). */
  delete(id: string): Promise<boolean>;
  /**
   * Whether the refresh family has ended (logout, reuse, cap): answered from memory (the watch cache
   * on Kubernetes) on every authenticated request, so it must never wait on the network.
   */
  isRevoked(id: string): boolean;
  /** The subject's refresh families that are neither revoked nor expired, oldest first; from memory, like isRevoked. */
  activeFamilies(subject: Subject, now: number): SessionRecord[];
}

/** A SessionStore in process memory: for unit tests and a single replica without Kubernetes. */
export class MemorySessionStore implements SessionStore {
  private readonly records = new Map<string, SessionRecord>();
  private counter = 0;

  async create(data: SessionData): Promise<SessionRecord> {
    if (this.records.has(data.id)) throw new Error(`session ${data.id} already exists`);
    const rec = { ...data, version: String(++this.counter) };
    this.records.set(data.id, rec);
    return rec;
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    return this.records.get(id);
  }

  async compareAndSwap(expected: SessionRecord, next: SessionData): Promise<SessionRecord | 'conflict' | 'gone'> {
    const current = this.records.get(expected.id);
    if (!current) return 'gone';
    if (current.version !== expected.version) return 'conflict';
    const rec = { ...next, id: expected.id, version: String(++this.counter) };
    this.records.set(expected.id, rec);
    return rec;
  }

  async delete(id: string): Promise<boolean> {
    return this.records.delete(id);
  }

  isRevoked(id: string): boolean {
    return this.records.get(id)?.revoked === true;
  }

  activeFamilies(subject: Subject, now: number): SessionRecord[] {
    return activeFamiliesOf([...this.records.values()], subject, now);
  }

  size(): number {
    return this.records.size;
  }
}

/** Refresh families of `subject` that are neither revoked nor expired, oldest (soonest to expire) first. */
export function activeFamiliesOf(records: readonly SessionRecord[], subject: Subject, now: number): SessionRecord[] {
  return records
    .filter(
      (r) =>
        r.purpose === 'refresh' &&
        !r.revoked &&
        r.expiresAt > now &&
        r.subject.kind === subject.kind &&
        r.subject.name === subject.name,
    )
    .sort((x, y) => x.expiresAt - y.expiresAt);
}
