import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../base/clock.js';
import { FailureWindow, type Admission } from './throttle.js';
import type { TokenService } from './tokens.js';

export interface DeviceTrustOptions {
  /** How long a device stays trusted after a successful sign-in (default 30 days). */
  readonly ttlSeconds?: number;
  /** Failed sign-ins allowed per device token per hour before it stops counting as trusted (default 10). */
  readonly failuresPerHour?: number;
}

const HOUR_MS = 3_600_000;

/** The email, normalised as everywhere in sign-in, hashed: device tokens and cookie names carry no address. */
export function accountHash(accountKey: string): string {
  return createHash('sha256').update(accountKey, 'utf8').digest('base64url');
}

/**
 * OWASP's "device cookies" (Authentication Cheat Sheet, "Slow down online guessing attacks with
 * device cookies"): a client that signed in to an account successfully gets a signed device token
 * for that account, in a cookie. Its later attempts at that account are limited per device token,
 * not by the account's limit for unknown clients, so an attacker who spends the account's budget
 * (or a victim's colleague who mistypes) cannot lock out the tills that already work. A device
 * token that fails too often is locked out itself and then counts as unknown.
 */
export class DeviceTrust {
  private readonly failures: FailureWindow;
  private readonly ttlSeconds: number;

  constructor(
    private readonly tokens: TokenService,
    clock: Clock,
    options: DeviceTrustOptions = {},
  ) {
    this.ttlSeconds = options.ttlSeconds ?? 30 * 24 * 3600;
    this.failures = new FailureWindow(options.failuresPerHour ?? 10, HOUR_MS, clock);
  }

  /** The admission of a trusted device for this account, or undefined when the client has no valid, unlocked device token. */
  async admit(
    request: FastifyRequest,
    accountKey: string,
  ): Promise<{ deviceId: string; admission: Admission } | undefined> {
    const hash = accountHash(accountKey);
    const raw = readCookie(request.headers.cookie, cookieName(hash));
    if (raw === undefined) return undefined;
    const device = await this.tokens.verifyDeviceToken(raw);
    if (!device || device.accountHash !== hash) return undefined;
    const admission = this.failures.admit(device.deviceId);
    // A locked-out device token is treated as no device token at all (OWASP), not refused outright.
    return admission.admitted ? { deviceId: device.deviceId, admission } : undefined;
  }

  /** After a successful sign-in: (re)issues the device token of this account to this client. */
  async remember(reply: FastifyReply, accountKey: string): Promise<void> {
    const hash = accountHash(accountKey);
    const token = await this.tokens.issueDeviceToken(hash, this.ttlSeconds);
    reply.header(
      'Set-Cookie',
      `${cookieName(hash)}=${token}; Path=/auth; Max-Age=${this.ttlSeconds}; HttpOnly; Secure; SameSite=Strict`,
    );
  }
}

const COOKIE_PREFIX = 'eo_device_';

/** One cookie per account, so a till shared by several cashiers keeps each one's trust. */
function cookieName(hash: string): string {
  return `${COOKIE_PREFIX}${hash.slice(0, 16)}`;
}

/** Whether a Cookie header holds a device cookie of any account (which one counts needs the body's email). */
export function hasDeviceCookie(header: string | undefined): boolean {
  return header !== undefined && header.includes(COOKIE_PREFIX);
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
