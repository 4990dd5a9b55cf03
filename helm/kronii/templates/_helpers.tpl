{{/*
Names and labels.
*/}}
{{- define "kronii.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kronii.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* "<fullname>-<component>", e.g. kronii-pipeline. Call with (dict "root" $ "component" "pipeline"). */}}
{{- define "kronii.componentName" -}}
{{- printf "%s-%s" (include "kronii.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kronii.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kronii.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kronii.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "kronii.labels" -}}
helm.sh/chart: {{ include "kronii.chart" .root }}
{{ include "kronii.selectorLabels" . }}
app.kubernetes.io/part-of: kronii
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{- /* repository:tag, or repository:tag@digest when a digest pins the image. */ -}}
{{- define "kronii.imageRef" -}}
{{- $ref := printf "%s:%s" .repository .tag }}
{{- if .digest }}{{ $ref = printf "%s@%s" $ref .digest }}{{ end }}
{{- $ref }}
{{- end }}

{{- define "kronii.image" -}}
{{- include "kronii.imageRef" (dict "repository" .Values.image.repository "tag" (default .Chart.AppVersion .Values.image.tag) "digest" .Values.image.digest) }}
{{- end }}

{{- define "kronii.serviceAccountName" -}}
{{- if .root.Values.serviceAccounts.create }}
{{- include "kronii.componentName" . }}
{{- else }}
{{- "default" }}
{{- end }}
{{- end }}

{{/*
A ServiceAccount for one tier, without an API token: kronii never talks to the Kubernetes API.
Call with (dict "root" $ "component" "pipeline").
*/}}
{{- define "kronii.serviceAccount" -}}
{{- if .root.Values.serviceAccounts.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "kronii.componentName" . }}
  labels:
    {{- include "kronii.labels" . | nindent 4 }}
  {{- with .root.Values.serviceAccounts.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: false
{{- end }}
{{- end }}

{{/*
The environment every kronii service gets: infrastructure URLs from the existing Secret, data
directory, log level, trace export.
*/}}
{{- define "kronii.commonEnv" -}}
{{- $c := .Values.connections -}}
- name: KRONII_NATS_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "connections.existingSecret is required" $c.existingSecret }}
      key: {{ $c.natsUrlKey }}
- name: KRONII_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ $c.existingSecret }}
      key: {{ $c.redisUrlKey }}
- name: KRONII_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $c.existingSecret }}
      key: {{ $c.databaseUrlKey }}
- name: KRONII_API_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ $c.existingSecret }}
      key: {{ $c.apiTokenKey }}
      optional: true
- name: KRONII_DATA_DIR
  value: /var/lib/kronii
- name: KRONII_LOG_LEVEL
  value: {{ .Values.logLevel | default "INFO" | quote }}
{{- with .Values.otelExporterOtlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end }}

{{/*
One kronii service tier: ServiceAccount, Deployment and Service, the way every tier is deployed.
Call with (dict "root" $ "component" "pipeline" "svc" .Values.pipeline); each tier's own
template file gates the call on `.Values.<tier>.create`.
*/}}
{{- define "kronii.meshService" -}}
{{- $root := .root -}}
{{- $svc := .svc -}}
{{- $component := .component -}}
{{- $ctx := dict "root" $root "component" $component -}}
{{- $upper := upper $component -}}
{{- if eq (int $svc.httpPort) (int $svc.grpcPort) }}
{{- fail (printf "%s.httpPort and %s.grpcPort must differ" $component $component) }}
{{- end }}
{{- with (include "kronii.serviceAccount" $ctx) }}
{{ . }}
---
{{- end }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "kronii.componentName" $ctx }}
  labels:
    {{- include "kronii.labels" $ctx | nindent 4 }}
spec:
  replicas: {{ $svc.replicas }}
  revisionHistoryLimit: 3
  selector:
    matchLabels:
      {{- include "kronii.selectorLabels" $ctx | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "kronii.labels" $ctx | nindent 8 }}
      annotations:
        {{- if $root.Values.metrics.podAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $svc.httpPort | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $svc.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "kronii.serviceAccountName" $ctx }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: 30
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      containers:
        - name: {{ $component }}
          image: {{ include "kronii.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command: ["/app/.venv/bin/python", "-m", "kronii.{{ $component }}"]
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          ports:
            - name: http
              containerPort: {{ $svc.httpPort }}
              protocol: TCP
            - name: grpc
              containerPort: {{ $svc.grpcPort }}
              protocol: TCP
          env:
            - name: KRONII_SERVICE
              value: {{ $component }}
            - name: KRONII_{{ $upper }}_HOST
              value: "0.0.0.0"
            - name: KRONII_{{ $upper }}_HTTP_PORT
              value: {{ $svc.httpPort | quote }}
            - name: KRONII_{{ $upper }}_GRPC_PORT
              value: {{ $svc.grpcPort | quote }}
            {{- include "kronii.commonEnv" $root | nindent 12 }}
            {{- with $svc.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          startupProbe:
            grpc:
              port: {{ $svc.grpcPort }}
            periodSeconds: 2
            failureThreshold: 30
          livenessProbe:
            grpc:
              port: {{ $svc.grpcPort }}
            periodSeconds: 10
            timeoutSeconds: 2
            failureThreshold: 3
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            periodSeconds: 5
            timeoutSeconds: 2
            failureThreshold: 3
          resources:
            {{- toYaml $svc.resources | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            - name: data
              mountPath: /var/lib/kronii
      volumes:
        - name: tmp
          emptyDir:
            medium: Memory
            sizeLimit: 64Mi
        - name: data
          emptyDir:
            sizeLimit: 1Gi
      {{- with $svc.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $svc.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $svc.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "kronii.componentName" $ctx }}
  labels:
    {{- include "kronii.labels" $ctx | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "kronii.selectorLabels" $ctx | nindent 4 }}
  ports:
    - name: http
      port: {{ $svc.httpPort }}
      targetPort: http
      protocol: TCP
    - name: grpc
      port: {{ $svc.grpcPort }}
      targetPort: grpc
      protocol: TCP
      appProtocol: grpc
{{- if $root.Values.metrics.serviceMonitor.create }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "kronii.componentName" $ctx }}
  labels:
    {{- include "kronii.labels" $ctx | nindent 4 }}
    {{- with $root.Values.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "kronii.selectorLabels" $ctx | nindent 6 }}
  endpoints:
    - port: http
      path: /metrics
      interval: {{ $root.Values.metrics.serviceMonitor.interval }}
{{- end }}
{{- end }}
