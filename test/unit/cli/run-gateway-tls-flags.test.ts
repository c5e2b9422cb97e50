import { describe, expect, it } from 'vitest';
import { UsageError, parseFlags } from '../../../src/cli/flags.js';
import { RUN_FLAGS, runConfig } from '../../../src/cli/run.js';

const config = (argv: string[], env: NodeJS.ProcessEnv = {}): ReturnType<typeof runConfig> =>
  runConfig(parseFlags(RUN_FLAGS, argv, env));

describe("endpoint-operator run: the gateway's certificate", () => {
  it('is issued by the operator by default, into endpoint-operator-gateway-tls in its namespace, for the gateway Service', () => {
    expect(config([], { POD_NAMESPACE: 'ops' }).gatewayTls).toEqual({
      issuer: 'operator',
      namespace: 'ops',
      secretName: 'endpoint-operator-gateway-tls',
      serviceName: 'endpoint-operator-gateway',
      caValidityDays: 3650,
      servingValidityDays: 365,
    });
  });

  it("comes from the user's Secret with --gateway-tls-issuer=external (the operator then only reads it)", () => {
    const c = config(['--gateway-tls-issuer=external', '--gateway-tls-secret=gateway-cert'], {
      EO_GATEWAY_SERVICE: 'gw',
    });
    expect(c.gatewayTls).toMatchObject({ issuer: 'external', secretName: 'gateway-cert', serviceName: 'gw' });
    expect(c.operator.gatewayUrl).toBe('https://endpoint-operator-gateway.endpoint-operator-system.svc');
  });

  it('is not there with --gateway-tls-issuer=none, and the default gateway URL is then http', () => {
    const c = config([], { EO_GATEWAY_TLS_ISSUER: 'none' });
    expect(c.gatewayTls).toBeUndefined();
    expect(c.operator.gatewayUrl).toBe('http://endpoint-operator-gateway.endpoint-operator-system.svc');
    expect(() => config(['--gateway-tls-issuer=cert-manager'])).toThrow(UsageError);
  });
});
