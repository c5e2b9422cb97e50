import { describe, expect, it } from 'vitest';
import { UsageError, parseFlags } from '../../../src/cli/flags.js';
import { GATEWAY_FLAGS, gatewayConfig } from '../../../src/cli/gateway.js';
import { DEFAULT_AUTH_SETTINGS } from '../../../src/gateway/auth/settings.js';

describe('endpoint-operator gateway flags', () => {
  it('defaults to all namespaces on :8090 with health and metrics on :8091', () => {
    expect(gatewayConfig(parseFlags(GATEWAY_FLAGS, [], {}))).toEqual({
      namespaces: [],
      listen: { host: '0.0.0.0', port: 8090 },
      health: { host: '0.0.0.0', port: 8091 },
      upstreamTimeoutMs: 60_000,
      connectTimeoutMs: 2_000,
      bodyLimitBytes: 1_500_000,
      stickyHeader: 'x-eo-sticky-key',
      requestLog: { payloadLimitBytes: 16_384, maxRecordsPerSecond: 100 },
      reservedPrefixes: ['endpoint-operator.dev', 'endpoint-operator.io'],
      auth: DEFAULT_AUTH_SETTINGS,
      apiWrites: true,
      serverLimits: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 60_000,
        keepAliveTimeoutMs: 65_000,
        maxConnections: 4096,
      },
      maxCallsPerCaller: 64,
      maxBodyBytesPerCaller: 3_000_000,
    });
  });

  it('takes environment variables, flags over them; --health-port=-1 turns health and metrics off', () => {
    const env = {
      EO_NAMESPACES: 'a,b',
      EO_GATEWAY_PORT: '9000',
      EO_GATEWAY_UPSTREAM_TIMEOUT: '2.5',
      EO_GATEWAY_STICKY_HEADER: '',
    };
    const config = gatewayConfig(
      parseFlags(GATEWAY_FLAGS, ['--port', '9100', '--health-port=-1', '--bind-address', '127.0.0.1'], env),
    );
    expect(config).toMatchObject({
      namespaces: ['a', 'b'],
      listen: { host: '127.0.0.1', port: 9100 },
      upstreamTimeoutMs: 2500,
      stickyHeader: 'x-eo-sticky-key',
    });
    expect(config.health).toBeUndefined();
    expect(gatewayConfig(parseFlags(GATEWAY_FLAGS, ['--sticky-header', ''], {})).stickyHeader).toBe('');
  });

  it('takes --request-log-sink (EO_GATEWAY_REQUEST_LOG_SINK) as the CloudEvents sink', () => {
    expect(
      gatewayConfig(parseFlags(GATEWAY_FLAGS, [], { EO_GATEWAY_REQUEST_LOG_SINK: 'http://broker/ns/default' }))
        .requestLog?.sink,
    ).toBe('http://broker/ns/default');
    expect(gatewayConfig(parseFlags(GATEWAY_FLAGS, ['--request-log-sink', ''], {})).requestLog?.sink).toBeUndefined();
  });

  it('reads the auth settings from flags and EO_GATEWAY_AUTH*', () => {
    const env = { EO_GATEWAY_AUTH: 'none', EO_GATEWAY_AUTH_AUDIENCES: 'a,b' };
    expect(
      gatewayConfig(parseFlags(GATEWAY_FLAGS, ['--auth-token-ttl', '5', '--auth-access-deny-ttl=0.5'], env)).auth,
    ).toMatchObject({ mode: 'none', audiences: ['a', 'b'], tokenSuccessTtlMs: 5000, accessDenyTtlMs: 500 });
  });

  it.each([
    [['--port', '70000'], /--port must be a port number/],
    [['--upstream-timeout', '0'], /--upstream-timeout must be positive/],
    [['--body-limit', '1.5'], /--body-limit must be a whole number of bytes/],
    [['--log-payload-limit=-1'], /--log-payload-limit must be a whole number of bytes/],
    [
      ['--request-log-sink', 'broker.knative-eventing'],
      /--request-log-sink must be an http or https URL, got "broker.knative-eventing"/,
    ],
    [['--request-log-sink', 'ftp://collector/'], /--request-log-sink must be an http or https URL/],
    [['--auth', 'basic'], /--auth must be one of token-review, none, got "basic"/],
    [['--auth-audiences', ''], /--auth-audiences must name at least one audience/],
    [['--auth-reviews-per-second', '0'], /--auth-reviews-per-second must be a whole number of at least 1/],
    [['--project', 'fixed'], /--project "fixed" must contain \{namespace\}/],
    [['--headers-timeout', '0'], /--headers-timeout must be a positive number of seconds/],
    [['--headers-timeout', '90'], /must not exceed the request timeout/],
    [['--max-connections', '0.5'], /--max-connections must be a whole number of at least 1/],
    [['--max-calls-per-caller', '0'], /--max-calls-per-caller must be a whole number of at least 1/],
  ])('refuses %j', (argv, message) => {
    expect(() => gatewayConfig(parseFlags(GATEWAY_FLAGS, argv, {}))).toThrow(UsageError);
    expect(() => gatewayConfig(parseFlags(GATEWAY_FLAGS, argv, {}))).toThrow(message);
  });
});
