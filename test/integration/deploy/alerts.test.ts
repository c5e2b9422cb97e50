/**
 * The shipped alerts against Debian's real promtool (installed on first use): `promtool check rules`
 * on the generated rules file (expressions and annotation templates), and `promtool test rules` with
 * a case per alert that it fires on its condition and stays silent on healthy series. The unit tests
 * run on a copy without annotations: promtool compares rendered annotations too, and what these
 * tests pin down is when an alert fires; the templates are checked by `check rules`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_GROUPS, rulesFileYaml } from '../../../src/deploy/alerts.js';
import { ensurePrometheus, type PrometheusTools } from '../../support/prometheus.js';

const run = promisify(execFile);

interface Series { series: string; values: string }
interface AlertCase {
  /** Series under which the alert fires at `at`, with these labels (besides alertname and severity). */
  readonly fires: { input: Series[]; at: string; labels: Record<string, string>[] };
  /** Healthy situations, each evaluated at `at`: no alert. */
  readonly silent: { name: string; input: Series[]; at: string }[];
}

const calls = (code: string, values: string): Series => ({
  series: `endpoint_operator_gateway_requests_total{namespace="ml",endpoint="fraud",deployed_model="1",method="predict",code="${code}"}`, values,
});

/** Cumulative buckets of a histogram whose every observation fell in the bucket `le` (`perMinute` of them). */
function histogram(name: string, labels: string, bounds: readonly string[], le: string, perMinute: number, minutes: number): Series[] {
  const at = bounds.indexOf(le);
  return [...bounds, '+Inf'].map((b, i) => ({ series: `${name}{${labels},le="${b}"}`, values: i >= at ? `0+${perMinute}x${minutes}` : `0x${minutes}` }));
}
const LATENCY_BOUNDS = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10'];
const upstream = (le: string): Series[] => histogram('endpoint_operator_gateway_upstream_duration_seconds_bucket', 'namespace="ml",endpoint="fraud",deployed_model="1"', LATENCY_BOUNDS, le, 60, 40);
const webhook = (le: string): Series[] => histogram('controller_runtime_webhook_latency_seconds_bucket', 'webhook="/validate"', LATENCY_BOUNDS, le, 30, 40);
const values = (n: number, f: (i: number) => number): string => Array.from({ length: n }, (_, i) => String(f(i))).join(' ');

const CASES: Record<string, AlertCase> = {
  EndpointOperatorGatewayErrorRatioHigh: {
    fires: { input: [calls('200', '0+60x40'), calls('503', '0+10x40')], at: '30m', labels: [{ namespace: 'ml', endpoint: 'fraud' }] },
    silent: [
      { name: '1.6% errors', input: [calls('200', '0+60x40'), calls('503', '0+1x40')], at: '30m' },
      { name: 'a trickle of calls, all failing', input: [calls('503', '0+1x20 20+0x20')], at: '30m' },
      { name: 'a 3-minute burst of errors', input: [calls('200', '0+60x40'), calls('503', '0x10 0+30x3 90x27')], at: '20m' },
    ],
  },
  EndpointOperatorUpstreamLatencyHigh: {
    fires: { input: upstream('5'), at: '30m', labels: [{ namespace: 'ml', endpoint: 'fraud', deployed_model: '1' }] },
    silent: [{ name: 'answers within 100 ms', input: upstream('0.1'), at: '30m' }, { name: 'no calls', input: upstream('5').map((s) => ({ ...s, values: '0x40' })), at: '30m' }],
  },
  EndpointOperatorResourceNotReady: {
    fires: {
      input: [{ series: 'endpoint_operator_resource_ready{kind="DeployedModel",namespace="ml",name="challenger",instance="a"}', values: '0x20' }],
      at: '15m', labels: [{ kind: 'DeployedModel', namespace: 'ml', name: 'challenger' }],
    },
    silent: [
      { name: 'Ready', input: [{ series: 'endpoint_operator_resource_ready{kind="DeployedModel",namespace="ml",name="champion",instance="a"}', values: '1x20' }], at: '15m' },
      { name: 'not Ready for 5 minutes (progressing)', input: [{ series: 'endpoint_operator_resource_ready{kind="PredictionEndpoint",namespace="ml",name="fraud",instance="a"}', values: '0x5 1x15' }], at: '15m' },
      {
        name: 'one replica\'s cache behind the other\'s', at: '15m',
        input: [
          { series: 'endpoint_operator_resource_ready{kind="PredictionEndpoint",namespace="ml",name="fraud",instance="a"}', values: '1x20' },
          { series: 'endpoint_operator_resource_ready{kind="PredictionEndpoint",namespace="ml",name="fraud",instance="b"}', values: '0x20' },
        ],
      },
    ],
  },
  EndpointOperatorReconcileErrors: {
    fires: { input: [{ series: 'controller_runtime_reconcile_total{controller="deployedmodel",result="error"}', values: '0+5x40' }], at: '30m', labels: [{ controller: 'deployedmodel' }] },
    silent: [
      { name: 'no errors', input: [{ series: 'controller_runtime_reconcile_total{controller="deployedmodel",result="error"}', values: '0x40' }], at: '30m' },
      { name: 'a few conflicts, then fine', input: [{ series: 'controller_runtime_reconcile_total{controller="deployedmodel",result="error"}', values: '0+1x3 3x37' }], at: '30m' },
    ],
  },
  EndpointOperatorWorkQueueGrowing: {
    fires: { input: [{ series: 'workqueue_depth{name="deployedmodel"}', values: '1+2x60' }], at: '45m', labels: [{ name: 'deployedmodel' }] },
    silent: [
      { name: 'bursts that drain', input: [{ series: 'workqueue_depth{name="deployedmodel"}', values: values(60, (i) => (i % 4 === 0 ? 0 : 3 * (i % 4))) }], at: '45m' },
      { name: 'a busy queue that holds steady', input: [{ series: 'workqueue_depth{name="deployedmodel"}', values: '5x60' }], at: '45m' },
    ],
  },
  EndpointOperatorMachineCatalogueInvalid: {
    fires: { input: [{ series: 'endpoint_operator_machine_catalogue_last_load_successful{job="endpoint-operator",instance="op-1"}', values: '1x5 0x30' }], at: '25m', labels: [{ job: 'endpoint-operator' }] },
    silent: [
      { name: 'every edit parsed', input: [{ series: 'endpoint_operator_machine_catalogue_last_load_successful{job="endpoint-operator",instance="op-1"}', values: '1x30' }], at: '25m' },
      { name: 'a bad edit fixed within minutes', input: [{ series: 'endpoint_operator_machine_catalogue_last_load_successful{job="endpoint-operator",instance="op-1"}', values: '1x5 0x6 1x20' }], at: '25m' },
    ],
  },
  EndpointOperatorWebhookLatencyHigh: {
    fires: { input: webhook('2.5'), at: '30m', labels: [{ webhook: '/validate' }] },
    silent: [{ name: 'answers within 25 ms', input: webhook('0.025'), at: '30m' }],
  },
  EndpointOperatorWebhookCertificateExpiresSoon: {
    fires: { input: [{ series: 'endpoint_operator_webhook_certificate_expiration_timestamp_seconds{instance="op-1"}', values: `${3 * 86400}x150` }], at: '2h', labels: [{ instance: 'op-1' }] },
    silent: [{ name: 'a fresh certificate (a year)', input: [{ series: 'endpoint_operator_webhook_certificate_expiration_timestamp_seconds{instance="op-1"}', values: `${365 * 86400}x150` }], at: '2h' },
      // Renewal happens at a third of a 365-day lifetime left: a healthy certificate never gets under 121 days.
      { name: 'at its renewal point', input: [{ series: 'endpoint_operator_webhook_certificate_expiration_timestamp_seconds{instance="op-1"}', values: `${122 * 86400}x150` }], at: '2h' }],
  },
  EndpointOperatorGatewayCertificateExpiresSoon: {
    fires: { input: [{ series: 'endpoint_operator_gateway_certificate_expiration_timestamp_seconds{instance="gw-1"}', values: `${3 * 86400}x150` }], at: '2h', labels: [{ instance: 'gw-1' }] },
    silent: [{ name: 'a fresh certificate (a year)', input: [{ series: 'endpoint_operator_gateway_certificate_expiration_timestamp_seconds{instance="gw-1"}', values: `${365 * 86400}x150` }], at: '2h' },
      { name: 'at its renewal point', input: [{ series: 'endpoint_operator_gateway_certificate_expiration_timestamp_seconds{instance="gw-1"}', values: `${122 * 86400}x150` }], at: '2h' }],
  },
  EndpointOperatorSignInThrottlingBurst: {
    fires: { input: [{ series: 'endpoint_operator_signin_login_attempts_total{outcome="throttled"}', values: '0+60x30' }], at: '20m', labels: [{}] },
    silent: [
      { name: 'a locked-out user now and then', input: [{ series: 'endpoint_operator_signin_login_attempts_total{outcome="throttled"}', values: '0+1x30' }], at: '20m' },
      { name: 'many failures, none throttled', input: [{ series: 'endpoint_operator_signin_login_attempts_total{outcome="failure"}', values: '0+60x30' }, { series: 'endpoint_operator_signin_login_attempts_total{outcome="throttled"}', values: '0x30' }], at: '20m' },
    ],
  },
  EndpointOperatorTraceExportFailing: {
    fires: { input: [{ series: 'endpoint_operator_trace_export_failed_spans_total{job="endpoint-operator-gateway"}', values: '0+512x40' }], at: '30m', labels: [{ job: 'endpoint-operator-gateway' }] },
    silent: [
      { name: 'every export accepted', input: [{ series: 'endpoint_operator_trace_export_failed_spans_total{job="endpoint-operator-gateway"}', values: '0x40' }], at: '30m' },
      { name: 'one collector restart, then fine', input: [{ series: 'endpoint_operator_trace_export_failed_spans_total{job="endpoint-operator-gateway"}', values: '0x5 512+512x2 1536x33' }], at: '30m' },
    ],
  },
  EndpointOperatorGatewayAuthReviewsFailing: {
    fires: {
      input: [{ series: 'endpoint_operator_gateway_auth_reviews_total{review="token",result="ok"}', values: '0+100x40' }, { series: 'endpoint_operator_gateway_auth_reviews_total{review="token",result="error"}', values: '0+20x40' }],
      at: '30m', labels: [{ review: 'token' }],
    },
    silent: [{
      name: '1% errors', at: '30m',
      input: [{ series: 'endpoint_operator_gateway_auth_reviews_total{review="access",result="ok"}', values: '0+100x40' }, { series: 'endpoint_operator_gateway_auth_reviews_total{review="access",result="error"}', values: '0+1x40' }],
    }],
  },
};

const RULES = ALERT_GROUPS.flatMap((g) => g.rules);

function unitTests(): string {
  const tests = RULES.flatMap((rule) => {
    const c = CASES[rule.alert];
    if (c === undefined) return [];
    const firing = {
      interval: '1m',
      name: `${rule.alert} fires`,
      input_series: c.fires.input,
      alert_rule_test: [{ eval_time: c.fires.at, alertname: rule.alert, exp_alerts: c.fires.labels.map((l) => ({ exp_labels: { ...l, severity: rule.labels.severity } })) }],
    };
    const silent = c.silent.map((s) => ({ interval: '1m', name: `${rule.alert} silent: ${s.name}`, input_series: s.input, alert_rule_test: [{ eval_time: s.at, alertname: rule.alert, exp_alerts: [] }] }));
    return [firing, ...silent];
  });
  return yaml.dump({ rule_files: ['rules.yaml'], evaluation_interval: '1m', tests }, { lineWidth: -1 });
}

describe('the shipped alerts', () => {
  let tools: PrometheusTools;
  let dir: string;
  beforeAll(async () => {
    tools = await ensurePrometheus();
    dir = await mkdtemp(join(tmpdir(), 'eo-alerts-'));
  }, 600_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('pass promtool check rules (expressions, durations, annotation templates)', async () => {
    const file = join(dir, 'check.yaml');
    await writeFile(file, rulesFileYaml());
    const { stdout } = await run(tools.promtool, ['check', 'rules', file]);
    expect(stdout).toContain(`SUCCESS: ${RULES.length} rules found`);
  });

  it('each have a unit test case', () => {
    expect(Object.keys(CASES).sort()).toEqual(RULES.map((r) => r.alert).sort());
  });

  it('fire on their condition and stay silent on healthy series (promtool test rules)', async () => {
    const bare = { groups: ALERT_GROUPS.map((g) => ({ name: g.name, rules: g.rules.map(({ annotations: _a, ...rule }) => rule) })) };
    await writeFile(join(dir, 'rules.yaml'), yaml.dump(bare, { lineWidth: -1 }));
    await writeFile(join(dir, 'tests.yaml'), unitTests());
    const result = await run(tools.promtool, ['test', 'rules', join(dir, 'tests.yaml')], { cwd: dir }).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? 1, out: `${err.stdout ?? ''}${err.stderr ?? ''}` }),
    );
    expect(result.out, result.out).toContain('SUCCESS');
    expect(result.code).toBe(0);
  }, 120_000);

  it('check rules refuses a broken annotation template (so the check above means something)', async () => {
    const file = join(dir, 'broken.yaml');
    await writeFile(file, yaml.dump({ groups: [{ name: 'g', rules: [{ alert: 'A', expr: 'up == 0', annotations: { summary: '{{ $labels.x ' } }] }] }));
    await expect(run(tools.promtool, ['check', 'rules', file])).rejects.toThrow();
  });
});
