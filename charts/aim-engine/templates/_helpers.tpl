{{/* Labels every object of the chart carries. */}}
{{- define "aim-engine.labels" -}}
app.kubernetes.io/name: aim-engine
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The pod selector; the same as the kustomize base so an install can move between the two. */}}
{{- define "aim-engine.selector" -}}
app.kubernetes.io/name: aim-engine
control-plane: controller-manager
{{- end }}
