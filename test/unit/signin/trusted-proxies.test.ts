import { describe, expect, it } from 'vitest';
import { parseFlags } from '../../../src/cli/flags.js';
import { RUN_FLAGS, runConfig } from '../../../src/cli/run.js';
import { parseTrustedProxies } from '../../../src/signin/trusted-proxies.js';
import { json, PASSWORD, testApp } from './fixtures.js';

describe('trusted proxies of the sign-in API', { timeout: 30_000 }, () => {
  it('parse from --signin-trusted-proxies or EO_SIGNIN_TRUSTED_PROXIES: a hop count or addresses and CIDRs', () => {
    expect(parseTrustedProxies('1')).toBe(1);
    expect(parseTrustedProxies(' 10.0.0.0/8, fd00::/8 ,192.0.2.1')).toEqual(['10.0.0.0/8', 'fd00::/8', '192.0.2.1']);
    for (const bad of ['0', '10.0.0.0/33', 'ingress', '10.0.0.1/8/1', ','])
      expect(() => parseTrustedProxies(bad), bad).toThrow(/--signin-trusted-proxies/);
    const flag = runConfig(parseFlags(RUN_FLAGS, ['--signin', '--signin-trusted-proxies', '2'], {}));
    expect(flag.signin?.trustedProxies).toBe(2);
    const env = runConfig(parseFlags(RUN_FLAGS, ['--signin'], { EO_SIGNIN_TRUSTED_PROXIES: '10.0.0.0/8' }));
    expect(env.signin?.trustedProxies).toEqual(['10.0.0.0/8']);
    expect(() => runConfig(parseFlags(RUN_FLAGS, ['--signin', '--signin-trusted-proxies', 'all'], {}))).toThrow(
      /not an IP address or CIDR/,
    );
  });

  /** The address the per-address limit counts, seen through two bad guesses then the right password. */
  async function limitedAddress(
    options: Parameters<typeof testApp>[0],
    remoteAddress: string,
    xff: (i: number) => string,
  ): Promise<number[]> {
    const { app } = await testApp({ ipFailuresPerHour: 1, ...options });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({
          method: 'POST',
          url: '/auth/pos/login',
          remoteAddress,
          ...json({ email: `x${i}@example.com`, password: 'wrong' }),
          headers: { 'content-type': 'application/json', 'x-forwarded-for': xff(i) },
        });
        codes.push(res.statusCode);
      }
      const ok = await app.inject({
        method: 'POST',
        url: '/auth/pos/login',
        remoteAddress,
        ...json({ email: 'ana@example.com', password: PASSWORD }),
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.200' },
      });
      codes.push(ok.statusCode);
      return codes;
    } finally {
      await app.close();
    }
  }

  it('by default ignore X-Forwarded-For: a forged one does not escape the per-address limit', async () => {
    expect(await limitedAddress({}, '203.0.113.1', (i) => `198.51.100.${i}`)).toEqual([401, 429, 429, 429]);
  });

  it('with CIDRs, count the rightmost untrusted address: a client cannot pick its own by prepending one', async () => {
    // The ingress (10.0.0.5) appends the real client (203.0.113.7) to whatever the client sent.
    const codes = await limitedAddress(
      { trustedProxies: ['10.0.0.0/8'] },
      '10.0.0.5',
      (i) => `198.51.100.${i}, 203.0.113.7`,
    );
    expect(codes.slice(0, 3)).toEqual([401, 429, 429]);
    expect(codes[3]).toBe(200); // another real client behind the same ingress is not throttled
  });

  it('with a hop count, count the address that many hops from the right', async () => {
    const codes = await limitedAddress({ trustedProxies: 1 }, '10.0.0.5', (i) => `198.51.100.${i}, 203.0.113.7`);
    expect(codes).toEqual([401, 429, 429, 200]);
  });
});
