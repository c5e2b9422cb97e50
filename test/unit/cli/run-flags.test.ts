import { describe, expect, it } from 'vitest';
import { UsageError, parseFlags } from '../../../src/cli/flags.js';
import { RUN_FLAGS, runConfig } from '../../../src/cli/run.js';

describe('endpoint-operator run flags', () => {
  it('defaults to a leader-elected operator with webhooks in-cluster and no sign-in', () => {
    const config = runConfig(parseFlags(RUN_FLAGS, [], {}));
    expect(config.operator).toMatchObject({
      project: '{namespace}',
      location: 'us-central1',
      workers: 4,
      namespaces: [],
      healthPort: 8081,
      metricsPort: 8080,
    });
    expect(config.operator.gatewayUrl).toBe('https://endpoint-operator-gateway.endpoint-operator-system.svc');
    expect(config.operator.leaderElection).toMatchObject({
      enabled: true,
      namespace: 'endpoint-operator-system',
      leaseName: 'endpoint-operator-leader',
    });
    // The webhook configurations name the Service's port, which targets the server's (9443).
    expect(config.webhook?.settings.endpoint).toEqual({ mode: 'in-cluster', port: 443 });
    expect(config.webhook?.listen.port).toBe(9443);
    expect(config.signin).toBeUndefined();
    expect(config.operator.metricsAuth).toBe('token-review');
    expect(runConfig(parseFlags(RUN_FLAGS, [], { EO_METRICS_AUTH: 'none' })).operator.metricsAuth).toBe('none');
    expect(() => runConfig(parseFlags(RUN_FLAGS, ['--metrics-auth', 'open'], {}))).toThrow(
      /--metrics-auth must be one of token-review, none/,
    );
  });

  it('bounds the webhook and sign-in ports by flags, refusing a headers timeout above the request timeout', () => {
    const config = runConfig(
      parseFlags(
        RUN_FLAGS,
        [
          '--webhook-request-timeout',
          '20',
          '--webhook-max-connections',
          '50',
          '--signin',
          '--signin-headers-timeout',
          '2.5',
        ],
        {},
      ),
    );
    expect(config.webhook?.serverLimits).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 20_000,
      keepAliveTimeoutMs: 60_000,
      maxConnections: 50,
    });
    expect(config.signin?.serverLimits?.headersTimeoutMs).toBe(2_500);
    expect(() => runConfig(parseFlags(RUN_FLAGS, ['--webhook-headers-timeout', '40'], {}))).toThrow(
      /must not exceed the request timeout/,
    );
    expect(() => runConfig(parseFlags(RUN_FLAGS, ['--signin', '--signin-verify-per-client', '0'], {}))).toThrow(
      /--signin-verify-per-client must be a whole number of at least 1/,
    );
  });

  it('takes environment variables, and flags over them', () => {
    const env = {
      EO_PROJECT: 'env-{namespace}',
      EO_WORKERS: '8',
      EO_NAMESPACES: 'a, b',
      EO_LEADER_ELECT: 'false',
      POD_NAMESPACE: 'ops',
    };
    const config = runConfig(parseFlags(RUN_FLAGS, ['--project', 'flag-{namespace}', '--signin'], env));
    expect(config.operator.project).toBe('flag-{namespace}');
    expect(config.operator.gatewayUrl).toBe('https://endpoint-operator-gateway.ops.svc');
    expect(config.operator.workers).toBe(8);
    expect(config.operator.namespaces).toEqual(['a', 'b']);
    expect(config.operator.leaderElection.enabled).toBe(false);
    expect(config.signin).toEqual({
      namespace: 'ops',
      host: '0.0.0.0',
      port: 8443,
      serverLimits: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 5_000,
        maxConnections: 1024,
      },
      verificationLimits: { perClient: 4, queueLength: 256 },
    });
  });

  it('refuses a --project without {namespace} (names would collide across namespaces) and a --gateway-url that is no http URL', () => {
    expect(() => runConfig(parseFlags(RUN_FLAGS, ['--project', 'endpoint-operator'], {}))).toThrow(
      /--project "endpoint-operator" must contain \{namespace\}/,
    );
    expect(() => runConfig(parseFlags(RUN_FLAGS, [], { EO_GATEWAY_URL: 'gateway:8090' }))).toThrow(
      /--gateway-url "gateway:8090" must be an (absolute )?http or https URL/,
    );
    expect(
      runConfig(parseFlags(RUN_FLAGS, ['--gateway-url', 'https://predict.example.com'], {})).operator.gatewayUrl,
    ).toBe('https://predict.example.com');
  });

  it('accepts --no-x and --x=false for booleans, and a URL host for webhooks outside the cluster', () => {
    const config = runConfig(
      parseFlags(RUN_FLAGS, ['--no-leader-elect', '--webhook=false', '--webhook-url-host', '10.1.2.3'], {}),
    );
    expect(config.operator.leaderElection.enabled).toBe(false);
    expect(config.webhook).toBeUndefined();
    const local = runConfig(parseFlags(RUN_FLAGS, ['--webhook-url-host', '10.1.2.3', '--webhook-port', '9444'], {}));
    expect(local.webhook?.settings.endpoint).toEqual({ mode: 'local', host: '10.1.2.3', port: 9444 });
  });

  it('refuses unknown flags and bad values with a usage error naming the flag', () => {
    expect(() => parseFlags(RUN_FLAGS, ['--bogus'], {})).toThrow(UsageError);
    expect(() => parseFlags(RUN_FLAGS, ['--workers', 'many'], {})).toThrow(/--workers: expected a number/);
    expect(() => parseFlags(RUN_FLAGS, ['--leader-elect=maybe'], {})).toThrow(/--leader-elect: expected true or false/);
    expect(() => runConfig(parseFlags(RUN_FLAGS, ['--workers', '0'], {}))).toThrow(
      /--workers must be a positive integer/,
    );
  });

  it('passes the leader-election timings through, client-go defaults unless flags or variables say otherwise', () => {
    expect(runConfig(parseFlags(RUN_FLAGS, [], {})).operator.leaderElection).toMatchObject({
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: 2,
    });
    const fromFlags = runConfig(
      parseFlags(RUN_FLAGS, ['--lease-duration', '6', '--renew-deadline=4', '--retry-period', '0.5'], {}),
    );
    expect(fromFlags.operator.leaderElection).toMatchObject({
      leaseDurationSeconds: 6,
      renewDeadlineSeconds: 4,
      retryPeriodSeconds: 0.5,
    });
    const env = { EO_LEASE_DURATION: '30', EO_RENEW_DEADLINE: '20', EO_RETRY_PERIOD: '5' };
    expect(runConfig(parseFlags(RUN_FLAGS, ['--retry-period', '3'], env)).operator.leaderElection).toMatchObject({
      leaseDurationSeconds: 30,
      renewDeadlineSeconds: 20,
      retryPeriodSeconds: 3,
    });
  });

  it('refuses leader-election timings under which two replicas could lead at once', () => {
    const config =
      (...argv: string[]) =>
      () =>
        runConfig(parseFlags(RUN_FLAGS, argv, {}));
    expect(config('--lease-duration', '0')).toThrow(/--lease-duration must be a positive number of seconds, got 0/);
    expect(config('--retry-period=-1')).toThrow(/--retry-period must be a positive number of seconds/);
    expect(config('--lease-duration', '6.5', '--renew-deadline', '4')).toThrow(
      /--lease-duration must be whole seconds/,
    );
    expect(config('--lease-duration', '10')).toThrow(
      /--renew-deadline \(10s\) must be shorter than --lease-duration \(10s\)/,
    );
    expect(config('--lease-duration', '6', '--renew-deadline', '8')).toThrow(UsageError);
    expect(config('--renew-deadline', '2.4')).toThrow(
      /--renew-deadline \(2.4s\) must be longer than 1.2 × --retry-period \(2s\)/,
    );
    expect(() => parseFlags(RUN_FLAGS, ['--lease-duration', 'soon'], {})).toThrow(
      /--lease-duration: expected a number/,
    );
  });
});
