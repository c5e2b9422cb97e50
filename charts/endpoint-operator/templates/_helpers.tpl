{{/* Selector labels: what picks the operator's pods (same as src/deploy/values.ts). */}}
{{- define "endpoint-operator.selectorLabels" -}}
app.kubernetes.io/name: endpoint-operator
app.kubernetes.io/instance: endpoint-operator
{{- end }}

{{/* Labels on every object; call with (dict "component" "controller"), or an empty dict for none. */}}
{{- define "endpoint-operator.labels" -}}
{{ include "endpoint-operator.selectorLabels" . }}
app.kubernetes.io/part-of: endpoint-operator
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end }}

{{/* The gateway's selector labels: not the operator's selector, which would adopt its pods. */}}
{{- define "endpoint-operator.gatewaySelectorLabels" -}}
app.kubernetes.io/name: endpoint-operator-gateway
app.kubernetes.io/instance: endpoint-operator
{{- end }}

{{/* Labels on every gateway object. */}}
{{- define "endpoint-operator.gatewayLabels" -}}
{{ include "endpoint-operator.gatewaySelectorLabels" . }}
app.kubernetes.io/part-of: endpoint-operator
app.kubernetes.io/component: gateway
{{- end }}

{{/*
kube-score checks a Deployment answers rather than follows (kubeScoreIgnore in src/deploy/workload.ts): no CPU
limit (throttling a mostly idle process only adds latency spikes; the request reserves the share), imagePullPolicy
IfNotPresent for an immutable release tag (Always would make every pod start depend on the registry), and ingress-only
NetworkPolicies (the apiserver is no pod, the gateway calls models in every namespace, and an allow-all egress rule
would void a cluster's own default-deny egress policy). Call with (dict "pullPolicy" P "networkPolicy" BOOL).
*/}}
{{- define "endpoint-operator.kubeScoreIgnore" -}}
kube-score/ignore: {{ list "container-resources" (ternary "" "container-image-pull-policy" (eq .pullPolicy "Always")) (ternary "pod-networkpolicy" "" .networkPolicy) | compact | join "," }}
{{- end }}

{{/* The OTEL_* environment of a container (src/deploy/tracing.ts); none when tracing.otlpEndpoint is ''. Call with (dict "tracing" .Values.tracing "service" NAME). */}}
{{- define "endpoint-operator.tracingEnv" -}}
{{- if .tracing.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .tracing.otlpEndpoint | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ .tracing.sampler | quote }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ .tracing.samplerArg | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ .service | quote }}
{{- end }}
{{- end }}
