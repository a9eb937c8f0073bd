{{/* The name of every object: fullnameOverride, else nameOverride, else name. */}}
{{- define "metareactor.name" -}}
{{- .Values.fullnameOverride | default .Values.nameOverride | default .Values.name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The namespace of the namespaced objects. */}}
{{- define "metareactor.namespace" -}}
{{- .Values.namespaceOverride | default .Release.Namespace }}
{{- end }}

{{- define "metareactor.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- .Values.serviceAccount.name | default (include "metareactor.name" .) }}
{{- else }}
{{- .Values.serviceAccount.name | default "default" }}
{{- end }}
{{- end }}

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

{{/* Whether Delve is the command (upstream's debug values): its flags are then the JVM debugger's. */}}
{{- define "metareactor.delve" -}}
{{- if eq (base (toString .Values.command)) "dlv" }}true{{ end }}
{{- end }}

{{/*
The engine's flags: commandArgs (upstream's name) or args; for Delve, what follows "--". Then the addresses of the
probes and metrics, leader election, and extraArgs, each unless the flags already set it.
*/}}
{{- define "metareactor.args" -}}
{{- $given := .Values.commandArgs | default .Values.args }}
{{- $flags := list }}
{{- if include "metareactor.delve" . }}
{{- $after := false }}
{{- range $given }}
{{- if $after }}{{ $flags = append $flags (toString .) }}{{ end }}
{{- if eq (toString .) "--" }}{{ $after = true }}{{ end }}
{{- end }}
{{- else }}
{{- range $given }}{{ $flags = append $flags (toString .) }}{{ end }}
{{- end }}
{{- $joined := printf " %s" (join " " $flags) }}
{{- if not (regexMatch " --?metrics-address" $joined) }}
{{- $flags = append $flags (printf "--metrics-address=:%v" .Values.ports.metrics) }}
{{- end }}
{{- if not (regexMatch " --?health-probe-bind-address" $joined) }}
{{- $flags = append $flags (printf "--health-probe-bind-address=:%v" .Values.probes.port) }}
{{- end }}
{{- if and (include "metareactor.leaderElection" .) (not (regexMatch " --?leader-election( |=|$)" $joined)) }}
{{- $flags = append $flags "--leader-election" }}
{{- $flags = append $flags (printf "--leader-election-id=%s" .Values.leaderElection.id) }}
{{- end }}
{{- range .Values.extraArgs }}{{ $flags = append $flags (toString .) }}{{ end }}
{{- toYaml $flags }}
{{- end }}

{{/*
JAVA_OPTS for Delve's flags: the JVM's debugger on --listen's port, waiting for a debugger to attach before the
engine starts unless --continue.
*/}}
{{- define "metareactor.debugger" -}}
{{- $port := "40000" }}
{{- $suspend := "y" }}
{{- range .Values.commandArgs }}
{{- if hasPrefix "--listen=" (toString .) }}{{ $port = regexReplaceAll ".*:" (toString .) "" }}{{ end }}
{{- if eq (toString .) "--continue" }}{{ $suspend = "n" }}{{ end }}
{{- end }}
{{- printf "-agentlib:jdwp=transport=dt_socket,server=y,suspend=%s,address=*:%s" $suspend $port }}
{{- end }}
