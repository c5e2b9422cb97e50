import { describe, expect, it } from 'vitest';
import { UsageError, parseFlags } from '../../../src/cli/flags.js';
import { GATEWAY_FLAGS, gatewayTransport } from '../../../src/cli/gateway.js';

const transport = (argv: string[], env: NodeJS.ProcessEnv = {}): ReturnType<typeof gatewayTransport> =>
  gatewayTransport(parseFlags(GATEWAY_FLAGS, argv, env));

describe('the gateway transport flags', () => {
  it('serve TLS from the certificate and key files, given as flags or environment', () => {
    expect(transport(['--tls-cert-file=/tls/tls.crt', '--tls-key-file=/tls/tls.key'])).toEqual({
      mode: 'tls',
      certFile: '/tls/tls.crt',
      keyFile: '/tls/tls.key',
    });
    expect(transport([], { EO_GATEWAY_TLS_CERT_FILE: '/a.crt', EO_GATEWAY_TLS_KEY_FILE: '/a.key' })).toEqual({
      mode: 'tls',
      certFile: '/a.crt',
      keyFile: '/a.key',
    });
  });

  it('serve plain HTTP only when asked to, and never with certificate files beside it', () => {
    expect(transport(['--plain-http'])).toEqual({ mode: 'plain-http' });
    expect(transport([], { EO_GATEWAY_PLAIN_HTTP: 'true' })).toEqual({ mode: 'plain-http' });
    expect(() => transport(['--plain-http', '--tls-cert-file=/a.crt'])).toThrow(UsageError);
  });

  it('refuse to choose for the user: no files and no --plain-http, or half a pair, is a usage error', () => {
    expect(() => transport([])).toThrow(/--tls-cert-file and --tls-key-file.*or --plain-http/);
    expect(() => transport(['--tls-cert-file=/a.crt'])).toThrow(UsageError);
  });
});
