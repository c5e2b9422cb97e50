/**
 * The Grafana dashboard the chart ships (`metrics.grafanaDashboard.enabled`): a ConfigMap labelled
 * `grafana_dashboard: "1"`, the label Grafana's dashboard sidecar (kiwigrid k8s-sidecar, as the
 * grafana and kube-prometheus-stack charts configure it) loads dashboards from. Every query reads
 * only metrics this project exports; an integration test runs each against a real Prometheus
 * scraping the operator and the gateway, so a renamed metric breaks a test, not a dashboard.
 * `npm run generate` writes the JSON to charts/endpoint-operator/files/grafana-dashboard.json.
 */
import { commonLabels, NAME, type DeployValues } from './values.js';

export interface PanelQuery {
  readonly expr: string;
  readonly legend: string;
}

export interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly unit: string;
  readonly queries: readonly PanelQuery[];
}

export interface RowSpec {
  readonly title: string;
  readonly panels: readonly PanelSpec[];
}

const calls = 'endpoint_operator_gateway_requests_total';
const quantiles = (metric: string, by: string, legend: string): PanelQuery[] => [0.5, 0.99].map((q) => ({
  expr: `histogram_quantile(${q}, sum by (${by}, le) (rate(${metric}_bucket[5m])))`,
  legend: `p${q * 100} ${legend}`,
}));

export const DASHBOARD_ROWS: readonly RowSpec[] = [
  {
    title: 'Gateway: calls per endpoint',
    panels: [
      { title: 'Calls', description: 'Prediction calls per second answered by the gateway, per endpoint.', unit: 'reqps', queries: [{ expr: `sum by (namespace, endpoint) (rate(${calls}[5m]))`, legend: '{{namespace}}/{{endpoint}}' }] },
      { title: 'Server errors', description: 'Calls answered with a 5xx per second, per endpoint and code (503: no ready model server; 504: no answer in time; 502: a bad answer).', unit: 'reqps', queries: [{ expr: `sum by (namespace, endpoint, code) (rate(${calls}{code=~"5.."}[5m]))`, legend: '{{namespace}}/{{endpoint}} {{code}}' }] },
      {
        title: 'Traffic split: declared and realised',
        description: 'Per deployed model, the percentage its endpoint\'s spec.trafficSplit gives it, beside the share of calls it actually served.',
        unit: 'percent',
        queries: [
          { expr: 'endpoint_operator_traffic_split_percent', legend: 'declared {{namespace}}/{{endpoint}} model {{deployed_model}}' },
          {
            expr: `100 * sum by (namespace, endpoint, deployed_model) (rate(${calls}{deployed_model!=""}[5m])) / ignoring (deployed_model) group_left sum by (namespace, endpoint) (rate(${calls}{deployed_model!=""}[5m]))`,
            legend: 'realised {{namespace}}/{{endpoint}} model {{deployed_model}}',
          },
        ],
      },
      { title: 'Gateway latency', description: 'Whole calls as the gateway saw them (body read to answer written), per endpoint.', unit: 's', queries: quantiles('endpoint_operator_gateway_request_duration_seconds', 'namespace, endpoint', '{{namespace}}/{{endpoint}}') },
      { title: 'Model server latency', description: 'Model server exchanges (retry included), per deployed model.', unit: 's', queries: quantiles('endpoint_operator_gateway_upstream_duration_seconds', 'namespace, endpoint, deployed_model', '{{namespace}}/{{endpoint}} model {{deployed_model}}') },
      {
        title: 'Backend readiness',
        description: 'Whether each DeployedModel is Ready (1) — its model server Service has ready endpoints — and the retries and outlier ejections of the gateway.',
        unit: 'short',
        queries: [
          { expr: 'max by (namespace, name) (endpoint_operator_resource_ready{kind="DeployedModel"})', legend: 'Ready {{namespace}}/{{name}}' },
          { expr: 'sum(rate(endpoint_operator_gateway_upstream_retries_total[5m]))', legend: 'retries/s' },
          { expr: 'sum(rate(endpoint_operator_gateway_outlier_ejections_total[5m]))', legend: 'ejections/s' },
        ],
      },
    ],
  },
  {
    title: 'Operator',
    panels: [
      { title: 'Reconciles', description: 'Reconciles per second by controller and result.', unit: 'ops', queries: [{ expr: 'sum by (controller, result) (rate(controller_runtime_reconcile_total[5m]))', legend: '{{controller}} {{result}}' }] },
      { title: 'Reconcile errors', description: 'Failed reconciles per second by controller (retried with backoff).', unit: 'ops', queries: [{ expr: 'sum by (controller) (rate(controller_runtime_reconcile_total{result="error"}[5m]))', legend: '{{controller}}' }] },
      { title: 'Work queue depth', description: 'Keys waiting to be reconciled, per controller.', unit: 'short', queries: [{ expr: 'sum by (name) (workqueue_depth)', legend: '{{name}}' }] },
      { title: 'Reconcile time', description: 'Time per reconcile, per controller.', unit: 's', queries: quantiles('controller_runtime_reconcile_time_seconds', 'controller', '{{controller}}') },
      { title: 'Resources not Ready', description: 'PredictionEndpoints, DeployedModels, RegistryServices and RegistryEndpoints whose Ready condition is not True.', unit: 'short', queries: [{ expr: 'sum by (kind) (1 - max by (kind, namespace, name) (endpoint_operator_resource_ready))', legend: '{{kind}}' }] },
    ],
  },
  {
    title: 'Webhooks',
    panels: [
      { title: 'Webhook latency', description: 'Admission and conversion review latency per webhook path (the API server waits for it on every write).', unit: 's', queries: quantiles('controller_runtime_webhook_latency_seconds', 'webhook', '{{webhook}}') },
      { title: 'Webhook requests', description: 'Reviews per second by webhook path and HTTP code.', unit: 'reqps', queries: [{ expr: 'sum by (webhook, code) (rate(controller_runtime_webhook_requests_total[5m]))', legend: '{{webhook}} {{code}}' }] },
      { title: 'Serving certificate expiry', description: 'Days until the webhook and gateway serving certificates each replica presents expire (renewed at a third of their lifetime left).', unit: 'd', queries: [{ expr: '(endpoint_operator_webhook_certificate_expiration_timestamp_seconds - time()) / 86400', legend: 'webhook {{instance}}' }, { expr: '(endpoint_operator_gateway_certificate_expiration_timestamp_seconds - time()) / 86400', legend: 'gateway {{instance}}' }] },
    ],
  },
  {
    title: 'Sign-in',
    panels: [
      { title: 'Sign-in attempts', description: 'Credential checks per second by outcome (success, failure, throttled, unavailable).', unit: 'reqps', queries: [{ expr: 'sum by (outcome) (rate(endpoint_operator_signin_login_attempts_total[5m]))', legend: '{{outcome}}' }] },
      { title: 'Throttled sign-ins', description: 'Sign-ins refused by a limit before any verification (answered 429).', unit: 'reqps', queries: [{ expr: 'sum(rate(endpoint_operator_signin_login_attempts_total{outcome="throttled"}[5m]))', legend: 'throttled' }] },
    ],
  },
  {
    title: 'Gateway authentication',
    panels: [
      { title: 'Authorization decisions', description: 'Calls per second by call and decision.', unit: 'reqps', queries: [{ expr: 'sum by (call, outcome) (rate(endpoint_operator_gateway_auth_decisions_total[5m]))', legend: '{{call}} {{outcome}}' }] },
      {
        title: 'Reviews',
        description: 'TokenReviews and SubjectAccessReviews per second by result, and their p99 latency.',
        unit: 'short',
        queries: [
          { expr: 'sum by (review, result) (rate(endpoint_operator_gateway_auth_reviews_total[5m]))', legend: '{{review}} {{result}}/s' },
          { expr: 'histogram_quantile(0.99, sum by (review, le) (rate(endpoint_operator_gateway_auth_review_duration_seconds_bucket[5m])))', legend: 'p99 {{review}} (s)' },
        ],
      },
      {
        title: 'Decision cache',
        description: 'Hit ratio and entries of the token and access caches.',
        unit: 'short',
        queries: [
          { expr: 'sum by (cache) (rate(endpoint_operator_gateway_auth_cache_requests_total{result="hit"}[5m])) / sum by (cache) (rate(endpoint_operator_gateway_auth_cache_requests_total[5m]))', legend: 'hit ratio {{cache}}' },
          { expr: 'sum by (cache) (endpoint_operator_gateway_auth_cache_entries)', legend: 'entries {{cache}}' },
        ],
      },
    ],
  },
];

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/** The dashboard model (Grafana schema 39): a row per area, three panels to a line. */
export function dashboard(): object {
  const panels: object[] = [];
  let id = 1;
  let y = 0;
  for (const row of DASHBOARD_ROWS) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y: y++ }, panels: [] });
    row.panels.forEach((p, i) => {
      panels.push({
        id: id++,
        type: 'timeseries',
        title: p.title,
        description: p.description,
        datasource: DATASOURCE,
        fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
        options: { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } },
        gridPos: { h: 8, w: 8, x: (i % 3) * 8, y: y + Math.floor(i / 3) * 8 },
        targets: p.queries.map((q, k) => ({ refId: String.fromCharCode(65 + k), datasource: DATASOURCE, expr: q.expr, legendFormat: q.legend })),
      });
    });
    y += Math.ceil(row.panels.length / 3) * 8;
  }
  return {
    uid: 'endpoint-operator',
    title: 'endpoint-operator',
    description: 'Prediction calls per endpoint and deployed model, the operator\'s reconciles, webhooks, sign-in and gateway authentication.',
    tags: ['endpoint-operator'],
    timezone: 'browser',
    editable: true,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-3h', to: 'now' },
    templating: { list: [{ name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0 }] },
    panels,
  };
}

/** Every panel query, named by its panel (the live-Prometheus test runs each). */
export function dashboardQueries(): { panel: string; expr: string }[] {
  return DASHBOARD_ROWS.flatMap((row) => row.panels.flatMap((p) => p.queries.map((q) => ({ panel: `${row.title} / ${p.title}`, expr: q.expr }))));
}

export function dashboardJson(): string {
  return JSON.stringify(dashboard(), null, 2);
}

export const DASHBOARD_KEY = `${NAME}.json`;

export function grafanaDashboardConfigMap(values: DeployValues): object {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${NAME}-dashboard`, namespace: values.namespace, labels: { ...commonLabels('metrics'), grafana_dashboard: '1' } },
    data: { [DASHBOARD_KEY]: dashboardJson() },
  };
}
