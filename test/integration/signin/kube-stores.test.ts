import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import { ManualClock } from '../../support/manual-clock.js';
import { KubernetesSessionStore } from '../../../src/signin/kube/sessions.js';
import { decodeProtectedHeader } from 'jose';
import { realClock } from '../../../src/base/clock.js';
import {
  KubernetesSigningKeyStore,
  ROTATE_ANNOTATION,
  ROTATED_ANNOTATION,
} from '../../../src/signin/kube/signing-key.js';
import { TokenService } from '../../../src/signin/tokens.js';
import { RefreshTokens } from '../../../src/signin/refresh-rotation.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { installPosCrds, testClient } from './helpers.js';

let ns: string;
let client: KubeClient;

beforeAll(async () => {
  await installPosCrds();
  ns = await createTestNamespace('signin-stores');
  client = testClient();
});
afterAll(() => client?.close());

describe('Kubernetes stores of the sign-in API', () => {
  it('replicas racing to create the signing-key Secret all end up with the same key', async () => {
    const stores = Array.from({ length: 4 }, () => new KubernetesSigningKeyStore(client, ns, 'race-key'));
    const keys = await Promise.all(stores.map((s) => s.load()));
    expect(new Set(keys.map((k) => k.current.kid)).size).toBe(1);
    expect(new Set(keys.map((k) => k.current.publicJwk.x)).size).toBe(1);
    // and a replica started later reads it instead of making a new one
    expect((await new KubernetesSigningKeyStore(client, ns, 'race-key').load()).current.kid).toBe(keys[0]!.current.kid);
  });

  it('rotates on request: exactly one replica writes a new key, every replica signs with it and still verifies the old one', async () => {
    const stop = new AbortController();
    try {
      const replicas = [
        new KubernetesSigningKeyStore(client, ns, 'rotating-key'),
        new KubernetesSigningKeyStore(client, ns, 'rotating-key'),
      ];
      const before = await Promise.all(replicas.map((r) => r.load()));
      const services = before.map((keys) => new TokenService(keys, realClock));
      replicas.forEach((r, i) => r.onChange((keys) => services[i]!.setKeys(keys)));
      expect(await Promise.all(replicas.map((r) => r.watch(stop.signal)))).toEqual([true, true]);
      const oldToken = await services[0]!.issueAccessToken({ kind: 'ShopUser', name: 'x' }, 's-1', 'pos');
      const annotated = await kubectl([
        'annotate',
        'secret',
        'rotating-key',
        '-n',
        ns,
        `${ROTATE_ANNOTATION}=first`,
        '--overwrite',
      ]);
      expect(annotated.code, annotated.stderr).toBe(0);
      const deadline = Date.now() + 10_000;
      while (services.some((s) => s.publicJwks().keys.length < 2) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      const oldKid = before[0]!.current.kid;
      for (const s of services) {
        const kids = s.publicJwks().keys.map((k) => k.kid);
        expect(kids).toHaveLength(2);
        expect(kids[1]).toBe(oldKid);
        expect(kids[0]).not.toBe(oldKid);
        expect(await s.verifyAccessToken(oldToken, 'pos')).toBeDefined();
      }
      expect(services[0]!.publicJwks()).toEqual(services[1]!.publicJwks());
      const newToken = await services[1]!.issueAccessToken({ kind: 'ShopUser', name: 'x' }, 's-2', 'pos');
      expect(decodeProtectedHeader(newToken).kid).toBe(services[0]!.publicJwks().keys[0]!.kid);
      expect(await services[0]!.verifyAccessToken(newToken, 'pos')).toBeDefined();
      const secret = JSON.parse((await kubectl(['get', 'secret', 'rotating-key', '-n', ns, '-o', 'json'])).stdout) as {
        metadata: { annotations: Record<string, string> };
      };
      expect(secret.metadata.annotations[ROTATED_ANNOTATION]).toBe('first');
    } finally {
      stop.abort();
    }
  });

  it('compare-and-swap refuses a stale resourceVersion, and many concurrent rotations of one token leave one winner', async () => {
    const store = new KubernetesSessionStore(client, ns);
    const clock = new ManualClock(Date.now());
    const tokens = new RefreshTokens(store, clock, 3600);
    const { session, refreshToken } = await tokens.start({ kind: 'ShopUser', name: 'someone' }, 'pos');
    const results = await Promise.all(Array.from({ length: 5 }, () => tokens.rotate(refreshToken)));
    expect(results.filter((r) => r.outcome === 'rotated')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'reused').length).toBeGreaterThanOrEqual(1);
    const stored = await store.get(session.id);
    expect(stored).toMatchObject({ revoked: true, revokedReason: 'RefreshTokenReuse' });
    // a write based on the original read is refused
    expect(await store.compareAndSwap(session, { ...session, revoked: false })).toBe('conflict');
  });

  it('sweeps expired sessions and only those', async () => {
    const store = new KubernetesSessionStore(client, ns);
    const clock = new ManualClock(Date.now());
    const short = new RefreshTokens(store, clock, 60);
    const long = new RefreshTokens(store, clock, 7200);
    const a = await short.start({ kind: 'AdminUser', name: 'a' }, 'admin');
    const b = await long.start({ kind: 'AdminUser', name: 'b' }, 'admin');
    await clock.advance(120_000);
    expect(await store.sweepExpired(clock)).toBeGreaterThanOrEqual(1);
    expect(await store.get(a.session.id)).toBeUndefined();
    expect(await store.get(b.session.id)).toBeDefined();
    expect(await store.delete(a.session.id)).toBe(false);
  });

  it('keeps a revoked family while its access tokens live, on every replica watching, then sweeps it', async () => {
    const clock = new ManualClock(Date.now());
    const stop = new AbortController();
    const watching = new KubernetesSessionStore(client, ns, { clock, accessTokenTtlMs: 60_000 });
    try {
      expect(await watching.start(stop.signal)).toBe(true);
      const writer = new KubernetesSessionStore(client, ns, { clock, accessTokenTtlMs: 60_000 });
      const tokens = new RefreshTokens(writer, clock, 7200);
      const { session } = await tokens.start({ kind: 'ShopUser', name: 'carol' }, 'pos');
      expect(watching.isRevoked(session.id)).toBe(false);
      await tokens.revoke(session.id, 'Logout');
      const deadline = Date.now() + 5000;
      while (!watching.isRevoked(session.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(watching.isRevoked(session.id)).toBe(true);
      expect(watching.countFamilies().revoked).toBeGreaterThanOrEqual(1);
      await watching.sweepExpired(clock);
      expect(await writer.get(session.id)).toBeDefined(); // its access tokens may still be out there
      await clock.advance(61_000);
      await watching.sweepExpired(clock);
      expect(await writer.get(session.id)).toBeUndefined();
      // deleted while watched: still refused for an access-token lifetime
      while (watching.families.get(ns, session.id) && Date.now() < deadline + 5000)
        await new Promise((r) => setTimeout(r, 10));
      expect(watching.isRevoked(session.id)).toBe(true);
      await clock.advance(61_000);
      expect(watching.isRevoked(session.id)).toBe(false);
    } finally {
      stop.abort();
    }
  });
});
