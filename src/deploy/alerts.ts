/**
 * The alerts the chart ships (`metrics.prometheusRule.enabled`): Prometheus rules over the metrics
 * this project exports, under controller-runtime's names where they exist. Every alert is for a
 * person to act on: its annotations say what is wrong, what to look at and how; none fires in a
 * healthy cluster (each has a promtool unit test that it stays silent on a healthy series).
 * The same rules go to charts/endpoint-operator/files/prometheus-rules.yaml (which the chart's
 * PrometheusRule includes) and deploy/prometheus-rule.yaml, written by `npm run generate`.
 */
import yaml from 'js-yaml';
import { commonLabels, NAME, type DeployValues } from './values.js';

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: { readonly severity: 'warning' | 'critical' };
  readonly annotations: { readonly summary: string; readonly description: string };
}

export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly AlertRule[];
}

/** At least one call a minute: below that a ratio is a few calls, not a trend. */
const GATEWAY_TRAFFIC = 'sum by (namespace, endpoint) (rate(endpoint_operator_gateway_requests_total[5m])) > 1 / 60';

export const ALERT_GROUPS: readonly RuleGroup[] = [
  {
    name: 'endpoint-operator.gateway',
    rules: [
      {
        alert: 'EndpointOperatorGatewayErrorRatioHigh',
        expr: `(sum by (namespace, endpoint) (rate(endpoint_operator_gateway_requests_total{code=~"5.."}[5m])) / sum by (namespace, endpoint) (rate(endpoint_operator_gateway_requests_total[5m]))) > 0.05 and on (namespace, endpoint) (${GATEWAY_TRAFFIC})`,
        for: '10m',
        labels: { severity: 'critical' },
        annotations: {
          summary: 'PredictionEndpoint {{ $labels.namespace }}/{{ $labels.endpoint }} answers more than 5% of its calls with a 5xx.',
          description: '{{ $value | humanizePercentage }} of the calls to {{ $labels.namespace }}/{{ $labels.endpoint }} failed with a server error over 5 minutes. '
            + 'See which deployed model and which code: sum by (deployed_model, code) (rate(endpoint_operator_gateway_requests_total{namespace="{{ $labels.namespace }}",endpoint="{{ $labels.endpoint }}"}[5m])). '
            + '503 = no ready model server endpoint (kubectl -n {{ $labels.namespace }} get deployedmodels, and the EndpointSlices of their backend Services); 504 = the model server did not answer in time; 502 = it answered badly. '
            + "The gateway's log names the model server of every failure (kubectl logs -l app.kubernetes.io/name=endpoint-operator-gateway).",
        },
      },
      {
        alert: 'EndpointOperatorUpstreamLatencyHigh',
        expr: 'histogram_quantile(0.99, sum by (namespace, endpoint, deployed_model, le) (rate(endpoint_operator_gateway_upstream_duration_seconds_bucket[5m]))) > 2.5',
        for: '15m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'Deployed model {{ $labels.deployed_model }} of {{ $labels.namespace }}/{{ $labels.endpoint }} takes more than 2.5 s at p99.',
          description: "The 99th percentile of the model server's answer time (retries included) is {{ $value | humanizeDuration }}. "
            + 'Check the model server pods of the DeployedModel (CPU throttling, replicas: kubectl -n {{ $labels.namespace }} get deployedmodels -o wide, then its backend Service), '
            + 'and whether retries rose (endpoint_operator_gateway_upstream_retries_total): a dying endpoint costs a connect timeout per call until it is ejected.',
        },
      },
      {
        alert: 'EndpointOperatorGatewayCertificateExpiresSoon',
        // `> 0`: a gateway with --plain-http has no certificate, and its gauge reads 0.
        expr: '(endpoint_operator_gateway_certificate_expiration_timestamp_seconds > 0) - time() < 7 * 86400',
        for: '1h',
        labels: { severity: 'critical' },
        annotations: {
          summary: 'The gateway serving certificate presented by {{ $labels.instance }} expires in less than 7 days.',
          description: 'It expires in {{ $value | humanizeDuration }}; renewal should have replaced it at two thirds of its lifetime. When it expires every client call fails its TLS handshake. '
            + "Look for 'gateway certificate renewal failed' in the operator's log (a missing permission on its Secret), or, with gateway.tls.issuer=external, at the issuer (kubectl describe certificate); "
            + "then at the gateway's log: 'serving certificate files are not a usable pair' means the Secret it mounts holds a certificate and key that do not belong together.",
        },
      },
    ],
  },
  {
    name: 'endpoint-operator.operator',
    rules: [
      {
        alert: 'EndpointOperatorResourceNotReady',
        expr: 'max by (kind, namespace, name) (endpoint_operator_resource_ready) == 0',
        for: '10m',
        labels: { severity: 'warning' },
        annotations: {
          summary: '{{ $labels.kind }} {{ $labels.namespace }}/{{ $labels.name }} has not been Ready for 10 minutes.',
          description: 'Its Ready condition says why and what to fix: kubectl -n {{ $labels.namespace }} get {{ $labels.kind }} {{ $labels.name }} -o jsonpath=\'{.status.conditions[?(@.type=="Ready")]}\'. '
            + 'The reasons are documented in the README (InvalidSpec: the spec breaks a rule; EndpointNotFound/ParentNotFound: what it refers to does not exist; TrafficSplitUnresolved; DeployedModelUnavailable: a model with traffic is not Ready and its calls answer 503; UndeployBlocked: the split still gives it traffic). '
            + 'kubectl describe shows the events the operator recorded.',
        },
      },
      {
        alert: 'EndpointOperatorReconcileErrors',
        expr: 'sum by (controller) (rate(controller_runtime_reconcile_total{result="error"}[5m])) > 0',
        for: '15m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'Controller {{ $labels.controller }} has failed reconciles for 15 minutes.',
          description: 'Reconciles keep failing ({{ $value | humanize }}/s) and are retried with backoff. The error kind is in sum by (kind) (rate(controller_runtime_reconcile_errors_total{controller="{{ $labels.controller }}"}[5m])); '
            + "the operator's log names each object and error (kubectl -n <operator namespace> logs -l app.kubernetes.io/name=endpoint-operator | grep 'reconcile failed'). "
            + 'Forbidden: the ClusterRole lacks a permission; a network error or 5xx: the API server is unreachable or overloaded.',
        },
      },
      {
        alert: 'EndpointOperatorWorkQueueGrowing',
        expr: 'min_over_time(workqueue_depth[15m]) > 0 and deriv(workqueue_depth[15m]) > 0',
        for: '15m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'The work queue of {{ $labels.name }} has grown for 30 minutes and never emptied ({{ $value }} keys now).',
          description: 'Objects change faster than they are reconciled. Look at the reconcile time (controller_runtime_reconcile_time_seconds) and errors of the controller, '
            + 'at the API server latency the operator sees (rest_client_request_duration_seconds), and at the operator pod CPU; raise --workers if reconciles are slow but healthy.',
        },
      },
      {
        alert: 'EndpointOperatorMachineCatalogueInvalid',
        expr: 'max by (job) (max_over_time(endpoint_operator_machine_catalogue_last_load_successful[5m])) == 0',
        for: '10m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'The machine catalogue ConfigMap does not parse: the operator refuses it and keeps the previous catalogue.',
          description: 'The last edit of the machine catalogue (ConfigMap endpoint-operator-machine-types, key machine-types.json) is not in effect: DeployedModels created since are placed by the previous catalogue, '
            + 'and one that needs a machine type only the edit adds stays Stalled (MachineTypeUnknown). '
            + "kubectl -n <operator namespace> describe configmap endpoint-operator-machine-types shows the Warning MachineCatalogueInvalid Event naming the first problem (invalid JSON, or the field and the rule); fix it and the catalogue takes effect without a restart.",
        },
      },
      {
        alert: 'EndpointOperatorWebhookLatencyHigh',
        expr: 'histogram_quantile(0.99, sum by (webhook, le) (rate(controller_runtime_webhook_latency_seconds_bucket[5m]))) > 1',
        for: '10m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'The {{ $labels.webhook }} webhook takes more than 1 s at p99.',
          description: 'The API server waits for it on every write of the operator\'s kinds (its timeout is 10 s, then the write fails). '
            + 'Check the operator pods\' CPU (throttling, a limit) and event-loop lag (nodejs_eventloop_lag_seconds), and the webhook\'s log lines (\'admission review\' with ms).',
        },
      },
      {
        alert: 'EndpointOperatorWebhookCertificateExpiresSoon',
        expr: 'endpoint_operator_webhook_certificate_expiration_timestamp_seconds - time() < 7 * 86400',
        for: '1h',
        labels: { severity: 'critical' },
        annotations: {
          summary: 'The webhook serving certificate presented by {{ $labels.instance }} expires in less than 7 days.',
          description: 'It expires in {{ $value | humanizeDuration }}; renewal should have replaced it at two thirds of its lifetime. When it expires every write of the operator\'s kinds fails. '
            + "Look for 'webhook certificate renewal failed' in the operator's log (a missing permission on its Secret, or cert-manager not issuing), "
            + 'then restart the operator pods to load the current certificate.',
        },
      },
    ],
  },
  {
    name: 'endpoint-operator.signin',
    rules: [
      {
        alert: 'EndpointOperatorSignInThrottlingBurst',
        expr: 'sum(rate(endpoint_operator_signin_login_attempts_total{outcome="throttled"}[5m])) > 0.2',
        for: '5m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'The sign-in API refuses more than 12 sign-ins a minute as throttled.',
          description: 'Throttled sign-ins ({{ $value | humanize }}/s) mean repeated failures: a password-guessing or credential-stuffing run, or clients that all look alike. '
            + 'If every client is refused, signin.trustedProxies is probably wrong (behind an ingress every client then shares its address); otherwise the sign-in log names the addresses.',
        },
      },
    ],
  },
  {
    name: 'endpoint-operator.tracing',
    rules: [
      {
        alert: 'EndpointOperatorTraceExportFailing',
        expr: 'sum by (job) (rate(endpoint_operator_trace_export_failed_spans_total[10m])) > 0',
        for: '15m',
        labels: { severity: 'warning' },
        annotations: {
          summary: '{{ $labels.job }} has been losing spans for 15 minutes: their OTLP exports fail.',
          description: 'Spans are lost ({{ $value | humanize }}/s) because the OpenTelemetry collector refuses them or cannot be reached. '
            + 'The pods\' log lines with "component":"opentelemetry" say why (the HTTP status and the collector\'s answer, or the connection error). '
            + 'Check tracing.otlpEndpoint (OTEL_EXPORTER_OTLP_ENDPOINT): that a collector listens there for OTLP/HTTP (port 4318 by default), and that no network policy stands between the pods and it.',
        },
      },
    ],
  },
  {
    name: 'endpoint-operator.gateway-auth',
    rules: [
      {
        alert: 'EndpointOperatorGatewayAuthReviewsFailing',
        expr: '(sum by (review) (rate(endpoint_operator_gateway_auth_reviews_total{result="error"}[5m])) / sum by (review) (rate(endpoint_operator_gateway_auth_reviews_total[5m]))) > 0.05',
        for: '10m',
        labels: { severity: 'critical' },
        annotations: {
          summary: 'More than 5% of the gateway\'s {{ $labels.review }} reviews fail.',
          description: 'The API server does not answer the gateway\'s TokenReviews or SubjectAccessReviews ({{ $value | humanizePercentage }} fail), so callers get 503 UNAVAILABLE. '
            + 'Check the API server\'s health and the gateway pods\' network path to it, and the review latency (endpoint_operator_gateway_auth_review_duration_seconds).',
        },
      },
    ],
  },
];

/** Every alert with its expression (the live-Prometheus test queries each). */
export function alertExpressions(): { alert: string; expr: string }[] {
  return ALERT_GROUPS.flatMap((g) => g.rules.map((r) => ({ alert: r.alert, expr: r.expr })));
}

/** A Prometheus rules file (`promtool check rules`, `rule_files:`). */
export function rulesFileYaml(): string {
  return yaml.dump({ groups: ALERT_GROUPS }, { lineWidth: -1, noRefs: true });
}

export function prometheusRule(values: DeployValues): object {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: NAME, namespace: values.namespace, labels: commonLabels('metrics') },
    spec: { groups: ALERT_GROUPS },
  };
}
