{{/* The release's objects are named after it: "descheduler" when the release is so named (the
names of the kustomize bases), else RELEASE-descheduler. */}}
{{- define "descheduler.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "descheduler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "descheduler.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "descheduler.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "descheduler.labels" -}}
{{ include "descheduler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The container's arguments: the runbook's (or the KubeDescheduler reference, which gives the
policy, interval, feature gate and verbosity), then the mode's, then extraArgs. */}}
{{- define "descheduler.args" -}}
{{- if .Values.kubedeschedulerRef }}
- --kubedescheduler-ref={{ .Values.kubedeschedulerRef }}
{{- else }}
- --policy-config-file=/policy-dir/policy.yaml
{{- if eq .Values.kind "Deployment" }}
- --descheduling-interval={{ .Values.deschedulingInterval }}
{{- end }}
{{- with .Values.featureGates }}
- --feature-gates={{ . }}
{{- end }}
{{- end }}
{{- if and (eq .Values.kind "Deployment") .Values.leaderElection.enabled }}
- --leader-elect
- --leader-elect-resource-namespace={{ .Release.Namespace }}
{{- end }}
{{- if not .Values.kubedeschedulerRef }}
- --v={{ .Values.verbosity }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The KubeDescheduler reference split: (namespace, name); the schema checks its shape. */}}
{{- define "descheduler.kubedeschedulerNamespace" -}}
{{- index (splitList "/" .Values.kubedeschedulerRef) 0 -}}
{{- end -}}
{{- define "descheduler.kubedeschedulerName" -}}
{{- index (splitList "/" .Values.kubedeschedulerRef) 1 -}}
{{- end -}}

{{/* The pod: the same for both kinds. */}}
{{- define "descheduler.podSpec" -}}
serviceAccountName: {{ include "descheduler.serviceAccountName" . }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- if eq .Values.kind "CronJob" }}
restartPolicy: Never
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.podSecurityContext }}
securityContext:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- if .Values.affinity }}
affinity:
{{- toYaml .Values.affinity | nindent 2 }}
{{- else if eq .Values.kind "Deployment" }}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "descheduler.selectorLabels" . | nindent 12 }}
{{- end }}
containers:
- name: descheduler
  image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  command:
  - /bin/descheduler
  args:
  {{- include "descheduler.args" . | nindent 2 }}
  {{- if and (eq .Values.kind "Deployment") (not .Values.kubedeschedulerRef) }}
  # the pod an Event about a refused policy reload is on
  env:
  - name: POD_NAME
    valueFrom:
      fieldRef:
        fieldPath: metadata.name
  - name: POD_NAMESPACE
    valueFrom:
      fieldRef:
        fieldPath: metadata.namespace
  {{- end }}
  ports:
  - name: metrics
    containerPort: 10258
    protocol: TCP
  livenessProbe:
    httpGet:
      path: /healthz
      port: 10258
      scheme: HTTPS
    initialDelaySeconds: 3
    periodSeconds: 10
    failureThreshold: 3
  {{- with .Values.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if not .Values.kubedeschedulerRef }}
  volumeMounts:
  - name: policy-volume
    mountPath: /policy-dir
    readOnly: true
volumes:
- name: policy-volume
  configMap:
    name: {{ include "descheduler.fullname" . }}
  {{- end }}
{{- end -}}
