import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';

/**
 * Which proxies in front of the sign-in API may say who the client is (X-Forwarded-For): a hop
 * count (the client is that many addresses from the right of the chain, e.g. 1 behind one ingress)
 * or the proxies' addresses and CIDRs (the client is the rightmost address not among them). None
 * (the default): the TCP peer is the client and X-Forwarded-For is ignored. Never "trust all": the
 * leftmost X-Forwarded-For entry is whatever the client wrote, which would let anyone pick the
 * address the per-address limits count.
 */
export type TrustedProxies = number | readonly string[];

/** Parses `--signin-trusted-proxies`: a hop count, or a comma-separated list of addresses and CIDRs. */
export function parseTrustedProxies(text: string): TrustedProxies {
  const value = text.trim();
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 16) throw new Error(`--signin-trusted-proxies: a hop count must be 1 to 16, got ${value}`);
    return hops;
  }
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0)
    throw new Error(
      '--signin-trusted-proxies: give a hop count (e.g. 1) or proxy addresses/CIDRs (e.g. 10.0.0.0/8,fd00::/8)',
    );
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra !== undefined)
      throw new Error(
        `--signin-trusted-proxies: ${JSON.stringify(entry)} is not an IP address or CIDR (like 10.0.0.0/8 or fd00::/8)`,
      );
  }
  return entries;
}

/**
 * fastify's `trustProxy` for these proxies: proxy-addr's list, or for a hop count the function
 * fastify itself builds from a number (the address at index `i` of the chain, 0 = the TCP peer, is a
 * proxy when `i < hops`).
 */
export function fastifyTrustProxy(
  proxies: TrustedProxies | undefined,
): string[] | ((address: string, hop: number) => boolean) | false {
  if (proxies === undefined) return false;
  if (typeof proxies === 'number') return (_address, hop) => hop < proxies;
  return [...proxies];
}

/**
 * The client address of a raw request exactly as fastify's `request.ip` computes it with
 * `fastifyTrustProxy(proxies)` (the same proxy-addr walk), for code that runs before fastify does.
 */
export function clientAddressOf(proxies: TrustedProxies | undefined): (req: IncomingMessage) => string {
  const trust = fastifyTrustProxy(proxies);
  if (trust === false) return (req) => req.socket.remoteAddress ?? '';
  const trusts = typeof trust === 'function' ? trust : proxyAddr.compile(trust);
  return (req) => proxyAddr(req, trusts);
}
