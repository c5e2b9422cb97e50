import { MAX_PREVIOUS_TOKEN_HASHES } from '../api/pos/v1/index.js';
import type { Clock } from '../base/clock.js';
import type { RevokedReason, SessionRecord, SessionStore } from './sessions.js';
import {
  hashesEqual,
  newRefreshToken,
  newSessionId,
  parseRefreshToken,
  tokenHash,
  type Audience,
  type Subject,
} from './tokens.js';

export type RotationResult =
  | { readonly outcome: 'rotated'; readonly session: SessionRecord; readonly refreshToken: string }
  | { readonly outcome: 'invalid' }
  /** A superseded token came back: the whole family is now revoked (RFC 9700 §4.14.2). */
  | { readonly outcome: 'reused'; readonly session: SessionRecord };

// Bounds the compare-and-swap retries; each conflict means another writer made progress.
const MAX_ATTEMPTS = 8;

/**
 * Refresh-token families over a SessionStore: one SignInSession per family holding the hash of the
 * current token and of the superseded ones. Rotation is a compare-and-swap on the record's version,
 * so when two requests (on one replica or two) present the same token, one rotates and the other
 * re-reads, finds its token superseded, and revokes the family: concurrent use is reuse.
 */
export class RefreshTokens {
  constructor(
    private readonly store: SessionStore,
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
    /** Active families per subject; starting one more revokes the oldest (default 10). */
    private readonly maxFamilies = 10,
  ) {}

  /**
   * Starts a family; returns its first refresh token. A subject keeps at most `maxFamilies` active
   * families (its tills and browsers): the oldest beyond that are revoked, so logins that never log
   * out cannot pile up SignInSessions, and a forgotten device loses access first.
   */
  async start(subject: Subject, audience: Audience): Promise<{ session: SessionRecord; refreshToken: string }> {
    const id = newSessionId();
    const refreshToken = newRefreshToken(id);
    const session = await this.store.create({
      id,
      purpose: 'refresh',
      subject,
      audience,
      tokenHash: tokenHash(refreshToken),
      previousTokenHashes: [],
      expiresAt: this.clock.now() + this.ttlSeconds * 1000,
      revoked: false,
    });
    const others = this.store.activeFamilies(subject, this.clock.now()).filter((r) => r.id !== id);
    for (const old of others.slice(0, Math.max(0, others.length - (this.maxFamilies - 1))))
      await this.revoke(old.id, 'SessionLimit');
    return { session, refreshToken };
  }

  async rotate(presented: string): Promise<RotationResult> {
    const parsed = parseRefreshToken(presented);
    if (!parsed) return { outcome: 'invalid' };
    const hash = tokenHash(presented);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const session = await this.store.get(parsed.sessionId);
      if (!session || session.purpose !== 'refresh' || session.revoked || session.expiresAt <= this.clock.now())
        return { outcome: 'invalid' };
      if (hashesEqual(session.tokenHash, hash)) {
        const refreshToken = newRefreshToken(session.id);
        const next = await this.store.compareAndSwap(session, {
          ...session,
          tokenHash: tokenHash(refreshToken),
          previousTokenHashes: [session.tokenHash, ...session.previousTokenHashes].slice(0, MAX_PREVIOUS_TOKEN_HASHES),
        });
        if (next === 'conflict') continue;
        if (next === 'gone') return { outcome: 'invalid' };
        return { outcome: 'rotated', session: next, refreshToken };
      }
      if (session.previousTokenHashes.some((h) => hashesEqual(h, hash))) {
        const revoked = await this.revoke(session.id, 'RefreshTokenReuse');
        return { outcome: 'reused', session: revoked ?? session };
      }
      return { outcome: 'invalid' };
    }
    return { outcome: 'invalid' };
  }

  /** The family's record if `presented` is its current token (no rotation), for logout. */
  async current(presented: string): Promise<SessionRecord | undefined> {
    const parsed = parseRefreshToken(presented);
    if (!parsed) return undefined;
    const session = await this.store.get(parsed.sessionId);
    if (!session || session.purpose !== 'refresh' || session.revoked) return undefined;
    return hashesEqual(session.tokenHash, tokenHash(presented)) ? session : undefined;
  }

  /** Marks the family revoked (idempotent; retried over conflicts). */
  async revoke(id: string, reason: RevokedReason): Promise<SessionRecord | undefined> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const session = await this.store.get(id);
      if (!session) return undefined;
      if (session.revoked) return session;
      const next = await this.store.compareAndSwap(session, {
        ...session,
        revoked: true,
        revokedReason: reason,
        revokedAt: this.clock.now(),
      });
      if (next === 'gone') return undefined;
      if (next !== 'conflict') return next;
    }
    throw new Error(`could not revoke session ${id}: too many concurrent writes`);
  }
}
