{{/* Labels on every object: Helm's, and the one the manifests' selectors use. */}}
{{- define "metareactor.labels" -}}
app.kubernetes.io/name: metacontroller
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{- define "metareactor.selector" -}}
app.kubernetes.io/name: metacontroller
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Leader election is on when asked for, and always with more than one replica. */}}
{{- define "metareactor.leaderElection" -}}
{{- if or .Values.leaderElection.enabled (gt (int .Values.replicas) 1) }}true{{ end }}
{{- end }}
