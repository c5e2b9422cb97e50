import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ensureWebhookCertificates } from '../../../src/webhook/certificate-secret.js';
import { startCertificateRenewal } from '../../../src/webhook/renewal.js';
import type { ServingCertificate, WebhookServer } from '../../../src/webhook/server.js';
import { localWebhookSettings, type WebhookSettings } from '../../../src/webhook/settings.js';
import { FakeApi } from './fake-api.js';
import { ManualClock } from '../../support/manual-clock.js';

const DAY = 86_400_000;
/** Real time allowed for real async work (key generation) on a loaded machine. */
const WAIT = { timeout: 15_000, interval: 20 };
const t0 = new Date('2026-03-01T00:00:00Z');
const settings: WebhookSettings = {
  ...localWebhookSettings(8443),
  namespace: 'eo-system',
  caValidityDays: 30,
  servingValidityDays: 9,
};

function fakeServer(): WebhookServer & { installed: ServingCertificate[] } {
  const installed: ServingCertificate[] = [];
  return { port: 8443, installed, setTls: (tls) => installed.push(tls), close: () => Promise.resolve() };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('startCertificateRenewal', () => {
  it('swaps in the renewed certificate at the renewal point, without touching the configuration while the CA is unchanged', async () => {
    const api = new FakeApi();
    const clock = new ManualClock(t0.getTime());
    const current = await ensureWebhookCertificates(api, settings, { clock });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const server = fakeServer();
    const abort = new AbortController();
    startCertificateRenewal({
      client: api,
      settings,
      server,
      current,
      log: pino({ level: 'silent' }),
      signal: abort.signal,
      kinds: [],
      clock,
    });
    api.calls.length = 0;

    // Before the renewal point (2/3 of 9 days) the timer (capped at an hour) only re-reads.
    await vi.advanceTimersByTimeAsync(3_600_000);
    // Wait until that check has finished and scheduled the next one (crypto runs on real threads).
    await vi.waitFor(() => expect(api.calls.length > 0 && vi.getTimerCount() === 1).toBe(true), WAIT);
    expect(api.writes()).toEqual([]);
    expect(server.installed).toEqual([]);

    await clock.advance(7 * DAY);
    await vi.advanceTimersByTimeAsync(3_600_000);
    await vi.waitFor(() => expect(server.installed).toHaveLength(1), WAIT);
    expect(server.installed[0]?.cert).not.toBe(current.cert);
    expect(api.writes().map((c) => `${c.verb} ${c.plural}`)).toEqual(['replace secrets']);
    abort.abort();
  });

  it('retries a failed check a minute later instead of giving up', async () => {
    const api = new FakeApi();
    const current = await ensureWebhookCertificates(api, settings, { clock: new ManualClock(t0.getTime()) });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const failing = {
      ...api,
      get: () => Promise.reject(new Error('apiserver down')),
      create: api.create.bind(api),
      replace: api.replace.bind(api),
      patch: api.patch.bind(api),
    };
    const errors: string[] = [];
    const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(line) });
    const abort = new AbortController();
    startCertificateRenewal({
      client: failing,
      settings,
      server: fakeServer(),
      current,
      log,
      signal: abort.signal,
      kinds: [],
      clock: new ManualClock(t0.getTime()),
      maxIntervalMs: 10_000,
    });
    await vi.advanceTimersByTimeAsync(10_000);
    await vi.waitFor(() => expect(errors.length === 1 && vi.getTimerCount() === 1).toBe(true), WAIT);
    await vi.advanceTimersByTimeAsync(59_000);
    expect(errors).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.waitFor(() => expect(errors).toHaveLength(2), WAIT);
    expect(errors[0]).toContain('apiserver down');
    abort.abort();
  });
});
