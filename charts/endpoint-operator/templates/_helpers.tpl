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
