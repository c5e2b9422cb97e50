/**
 * Keys derived from credentials and principals: an HMAC-SHA256 under a random key made once per
 * process (as k8s.io/apiserver's token cache keys its entries), so a heap dump or a log holds no token,
 * and a key cannot be turned back into a user name or compared across processes.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { UserInfo } from './reviews.js';

export class Keyer {
  constructor(private readonly secret: Buffer = randomBytes(32)) {}

  of(...parts: readonly string[]): string {
    const h = createHmac('sha256', this.secret);
    for (const part of parts) h.update(part).update('\u0000');
    return h.digest('base64url');
  }

  /** A stable per-principal key: the uid when the authenticator gives one (a deleted and re-created account is another principal), else the name. */
  principal(user: UserInfo): string {
    return this.of('principal', user.uid !== '' ? `uid:${user.uid}` : `name:${user.username}`);
  }

  /** Everything a SubjectAccessReview is asked about the user (two users differing only in groups are two keys). */
  user(user: UserInfo): string {
    const extra = Object.keys(user.extra)
      .sort()
      .map((k) => `${k}=${(user.extra[k] ?? []).join(',')}`);
    return this.of('user', user.username, user.uid, user.groups.join(','), extra.join(';'));
  }
}

/**
 * When the token is a JWT (ServiceAccount and OIDC tokens are), its `exp` claim in milliseconds: a cached
 * "authenticated" must not outlive the token. Read without verifying: it only ever shortens a TTL.
 */
export function jwtExpiryMs(token: string): number | undefined {
  try {
    const { exp } = decodeJwt(token);
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
