import { randomBytes, createHash, timingSafeEqual } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT, createLocalJWKSet, type JSONWebKeySet, type JWK } from 'jose';
import type { Clock } from '../base/clock.js';
import { JWS_ALGORITHM, type SigningKey, type SigningKeys } from './signing-key.js';

export type SubjectKind = 'ShopUser' | 'AdminUser';
export interface Subject {
  readonly kind: SubjectKind;
  readonly name: string;
}

/**
 * `typ` is pinned per token kind (RFC 8725 §3.11) so one kind can never pass for another: a POS
 * sessionToken is signed by the same key as an access token but is refused wherever an access token
 * is expected, and the other way round.
 */
export const TokenTypes = {
  access: 'at+jwt', // RFC 9068
  shopSelection: 'pos-shop-selection+jwt',
  /** OWASP's device cookie: proof that this client signed in to the account before. */
  device: 'signin-device+jwt',
} as const;

/** A verified device token: which account it was issued for (a hash of the email) and its id. */
export interface DeviceToken {
  readonly accountHash: string;
  readonly deviceId: string;
}

/**
 * Each kind of access token has its own `aud` (RFC 9068 §3), so a resource server that checks `aud`
 * cannot take a back-office or admin token for a till's, or the other way round.
 */
export const AUDIENCES = ['pos', 'back-office', 'admin'] as const;
export type Audience = (typeof AUDIENCES)[number];

export interface TokenSettings {
  readonly issuer: string;
  readonly accessTokenTtlSeconds: number;
  readonly sessionTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
}

export const DEFAULT_TOKEN_SETTINGS: TokenSettings = {
  issuer: 'endpoint-operator-signin',
  accessTokenTtlSeconds: 15 * 60,
  sessionTokenTtlSeconds: 5 * 60,
  refreshTokenTtlSeconds: 30 * 24 * 3600,
};

export interface VerifiedToken {
  readonly subject: Subject;
  readonly audience: Audience;
  /** The SignInSession behind it: the refresh family of an access token, the selection of a sessionToken. */
  readonly sessionId: string;
  readonly expiresAtMs: number;
}

const CLAIM_KIND = 'knd';
/** Device tokens are for this server only: no resource server that checks `aud` accepts one. */
const DEVICE_AUDIENCE = 'endpoint-operator-signin-device';

/** How many verified access tokens are remembered (one per active till, typically). */
const VERIFIED_CACHE_SIZE = 10_000;

export class TokenService {
  private jwks: ReturnType<typeof createLocalJWKSet>;
  private key: SigningKey;
  private previous: readonly JWK[];
  /**
   * Access tokens already verified, until they expire. An Ed25519 verification costs more than the rest
   * of a /auth/pos/me request, and a till presents the same token for its whole
   * 15-minute life. Only the signature check is cached: whether the user is still active and still
   * attached to the shop is checked against the directory on every request.
   */
  private readonly verified = new Map<string, { token: VerifiedToken; expiresAtMs: number }>();

  constructor(
    keys: SigningKeys,
    private readonly clock: Clock,
    readonly settings: TokenSettings = DEFAULT_TOKEN_SETTINGS,
  ) {
    this.key = keys.current;
    this.previous = keys.previous;
    this.jwks = createLocalJWKSet(this.publicJwks());
  }

  /** After a rotation: sign with the new key, verify with both. Cached verifications stay valid (the old key still is). */
  setKeys(keys: SigningKeys): void {
    this.key = keys.current;
    this.previous = keys.previous;
    this.jwks = createLocalJWKSet(this.publicJwks());
  }

  /** The current key first, then the one it replaced during a rotation. */
  publicJwks(): JSONWebKeySet {
    return { keys: [this.key.publicJwk, ...this.previous.filter((k) => k.kid !== this.key.kid)] };
  }

  issueAccessToken(subject: Subject, sessionId: string, audience: Audience): Promise<string> {
    return this.sign(TokenTypes.access, subject, sessionId, audience, this.settings.accessTokenTtlSeconds);
  }

  issueSessionToken(subject: Subject, selectionId: string): Promise<string> {
    return this.sign(TokenTypes.shopSelection, subject, selectionId, 'pos', this.settings.sessionTokenTtlSeconds);
  }

  /** Undefined unless `token` is a valid, unexpired access token for `audience`. */
  async verifyAccessToken(token: string, audience: Audience): Promise<VerifiedToken | undefined> {
    const cached = this.verified.get(token);
    if (cached !== undefined) {
      if (cached.expiresAtMs > this.clock.now()) return cached.token.audience === audience ? cached.token : undefined;
      this.verified.delete(token);
    }
    const verified = await this.verify(token, TokenTypes.access, audience);
    if (verified !== undefined) {
      if (this.verified.size >= VERIFIED_CACHE_SIZE) {
        const oldest = this.verified.keys().next();
        if (!oldest.done) this.verified.delete(oldest.value);
      }
      this.verified.set(token, { token: verified, expiresAtMs: verified.expiresAtMs });
    }
    return verified;
  }

  verifySessionToken(token: string): Promise<VerifiedToken | undefined> {
    return this.verify(token, TokenTypes.shopSelection, 'pos');
  }

  /** A device token for the account, valid `ttlSeconds`; signed by the shared key, so every replica accepts it. */
  issueDeviceToken(accountHash: string, ttlSeconds: number): Promise<string> {
    const now = Math.floor(this.clock.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: JWS_ALGORITHM, typ: TokenTypes.device, kid: this.key.kid })
      .setIssuer(this.settings.issuer)
      .setAudience(DEVICE_AUDIENCE)
      .setSubject(accountHash)
      .setJti(randomBytes(16).toString('base64url'))
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(this.key.privateKey);
  }

  async verifyDeviceToken(token: string): Promise<DeviceToken | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.jwks, {
        algorithms: [JWS_ALGORITHM],
        typ: TokenTypes.device,
        issuer: this.settings.issuer,
        audience: DEVICE_AUDIENCE,
        currentDate: new Date(this.clock.now()),
        requiredClaims: ['sub', 'exp', 'jti'],
      });
      return payload.sub === undefined || payload.jti === undefined
        ? undefined
        : { accountHash: payload.sub, deviceId: payload.jti };
    } catch (e) {
      if (e instanceof joseErrors.JOSEError) return undefined;
      throw e;
    }
  }

  private async sign(typ: string, subject: Subject, sid: string, audience: Audience, ttl: number): Promise<string> {
    const now = Math.floor(this.clock.now() / 1000);
    return new SignJWT({ [CLAIM_KIND]: subject.kind, sid })
      .setProtectedHeader({ alg: JWS_ALGORITHM, typ, kid: this.key.kid })
      .setIssuer(this.settings.issuer)
      .setAudience(audience)
      .setSubject(subject.name)
      .setJti(randomBytes(16).toString('base64url'))
      .setIssuedAt(now)
      .setExpirationTime(now + ttl)
      .sign(this.key.privateKey);
  }

  /** Undefined for anything but a valid, unexpired token of exactly this `typ`. */
  private async verify(token: string, typ: string, audience: Audience): Promise<VerifiedToken | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.jwks, {
        algorithms: [JWS_ALGORITHM],
        typ,
        issuer: this.settings.issuer,
        audience,
        currentDate: new Date(this.clock.now()),
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      const kind = payload[CLAIM_KIND];
      const sid = payload.sid;
      if (
        (kind !== 'ShopUser' && kind !== 'AdminUser') ||
        typeof sid !== 'string' ||
        payload.sub === undefined ||
        payload.exp === undefined
      )
        return undefined;
      return { subject: { kind, name: payload.sub }, audience, sessionId: sid, expiresAtMs: payload.exp * 1000 };
    } catch (e) {
      if (e instanceof joseErrors.JOSEError) return undefined;
      throw e;
    }
  }
}

/**
 * Refresh tokens are opaque: `<session id>.<256 random bits>`. Only the SHA-256 of the whole
 * token is stored, so a leaked SignInSession does not leak a usable token.
 */
export function newRefreshToken(sessionId: string): string {
  return `${sessionId}.${randomBytes(32).toString('base64url')}`;
}

export function parseRefreshToken(token: string): { sessionId: string } | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return undefined;
  const sessionId = token.slice(0, dot);
  const secret = token.slice(dot + 1);
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(sessionId) || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return undefined;
  return { sessionId };
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

/** Constant-time comparison of two token hashes (RFC 6819 §5.1.4.2.2 style, no early exit). */
export function hashesEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

export function newSessionId(): string {
  // Kubernetes object names: lowercase alphanumerics, so hex.
  return `s-${randomBytes(12).toString('hex')}`;
}
