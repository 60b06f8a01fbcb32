{{- define "webutil.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "webutil.labels" -}}
app.kubernetes.io/part-of: webutil
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "name" "billing") */}}
{{- define "webutil.selector" -}}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/name: {{ .name }}
{{- end -}}

{{- define "webutil.componentName" -}}
{{- printf "%s-%s" (include "webutil.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "webutil.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "webutil.fullname" .)) -}}
{{- end -}}

{{/* "true" when billing uses Cloudflare Turnstile (keys in the chart's Secret, or said to be in the existing one). */}}
{{- define "webutil.turnstile" -}}
{{- if .Values.secrets.existingSecret -}}
{{- .Values.secrets.existingSecretHasTurnstile -}}
{{- else -}}
{{- not (empty .Values.secrets.turnstileSecret) -}}
{{- end -}}
{{- end -}}

{{/* "true" when billing sells by card through Stripe: its keys in the chart's Secret, or in the existing one. */}}
{{- define "webutil.stripe" -}}
{{- if .Values.secrets.existingSecret -}}
{{- .Values.secrets.existingSecretHasStripe -}}
{{- else -}}
{{- not (empty .Values.secrets.stripeSecretKey) -}}
{{- end -}}
{{- end -}}

{{/* STRIPE_PRICES from the payments values: ITEM=price_id:amount, comma-separated, in item order. */}}
{{- define "webutil.stripePrices" -}}
{{- $items := list -}}
{{- range $item, $price := .Values.payments.prices -}}
{{- $items = append $items (printf "%s=%s:%d" $item $price.priceId (int $price.amount)) -}}
{{- end -}}
{{- join "," $items | default "-" -}}
{{- end -}}

{{/* Names of the services whose `flag` (usesMongo, usesNats) is set, as JSON: (dict "root" $ "flag" "usesMongo") */}}
{{- define "webutil.servicesWith" -}}
{{- $names := list -}}
{{- $flag := .flag -}}
{{- range $name, $svc := .root.Values.services -}}
{{- if index $svc $flag -}}{{- $names = append $names $name -}}{{- end -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/*
Ingress of a bundled dependency (MongoDB, NATS) on `port`: only the release's pods of the services whose
`flag` is set: (dict "root" $ "flag" "usesMongo" "port" 27017)
*/}}
{{- define "webutil.clientsIngress" -}}
{{- $names := include "webutil.servicesWith" . | fromJsonArray -}}
{{- if $names }}
- from:
    - podSelector:
        matchLabels: { app.kubernetes.io/instance: {{ .root.Release.Name }} }
        matchExpressions:
          - { key: app.kubernetes.io/name, operator: In, values: {{ toJson $names }} }
  ports:
    - { port: {{ .port }}, protocol: TCP }
{{- else }} []
{{- end }}
{{- end -}}

{{- define "webutil.natsUrl" -}}
{{- if .Values.nats.enabled -}}
nats://{{ include "webutil.fullname" . }}-nats:4222
{{- else -}}
{{ .Values.nats.url }}
{{- end -}}
{{- end -}}

{{/* The Connect (HTTP/1.1) port of a gRPC service: its gRPC port + 1000, as in the local layout. */}}
{{- define "webutil.connectPort" -}}
{{- add .port 1000 -}}
{{- end -}}

{{/* Internet egress rules: 0.0.0.0/0 and ::/0 minus networkPolicy.blockedCidrs (each family cut from its own). */}}
{{- define "webutil.internetPeers" -}}
{{- $v4 := list -}}
{{- $v6 := list -}}
{{- range .Values.networkPolicy.blockedCidrs -}}
{{- if contains ":" . -}}{{- $v6 = append $v6 . -}}{{- else -}}{{- $v4 = append $v4 . -}}{{- end -}}
{{- end -}}
- ipBlock: { cidr: 0.0.0.0/0, except: {{ toJson $v4 }} }
- ipBlock: { cidr: "::/0", except: {{ toJson $v6 }} }
{{- end -}}

{{- define "webutil.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.podSecurity.runAsUser }}
runAsGroup: {{ .Values.podSecurity.runAsGroup }}
fsGroup: {{ .Values.podSecurity.fsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "webutil.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
One service: Deployment, Service, and its HorizontalPodAutoscaler, PodDisruptionBudget and
NetworkPolicy. Called as (dict "root" $ "name" "<key under .Values.services>").
*/}}
{{- define "webutil.service" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $svc := index $root.Values.services $name -}}
{{- $full := include "webutil.componentName" . -}}
{{- $tag := $root.Values.image.tag | default $root.Chart.AppVersion -}}
{{- $monitor := include "webutil.serviceMonitorEnabled" $root -}}
{{- $secret := include "webutil.secretName" $root -}}
{{- $egress := toString $svc.internetEgress -}}
{{- $turnstile := eq (include "webutil.turnstile" $root) "true" -}}
{{- $stripe := eq (include "webutil.stripe" $root) "true" -}}
{{- $internet := or (eq $egress "true") (and (eq $egress "turnstile") (or $turnstile $stripe)) -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $full }}
  labels:
    {{- include "webutil.labels" $root | nindent 4 }}
    {{- include "webutil.selector" . | nindent 4 }}
spec:
  {{- if not $svc.autoscaling.enabled }}
  replicas: {{ $svc.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }
  selector:
    matchLabels:
      {{- include "webutil.selector" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "webutil.labels" $root | nindent 8 }}
        {{- include "webutil.selector" . | nindent 8 }}
      annotations:
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- if ne $monitor "true" }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $root.Values.metrics.port | quote }}
        prometheus.io/path: /metrics
        {{- end }}
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: {{ $svc.terminationGracePeriodSeconds }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- include "webutil.podSecurityContext" $root | nindent 8 }}
      {{- if $root.Values.topologySpread }}
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "webutil.selector" . | nindent 14 }}
        - maxSkew: 1
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "webutil.selector" . | nindent 14 }}
      {{- end }}
      containers:
        - name: {{ $name }}
          image: "{{ $root.Values.image.registry }}/{{ $name }}:{{ $tag }}"
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          envFrom:
            - configMapRef:
                name: {{ include "webutil.fullname" $root }}-config
          env:
            - name: PORT
              value: {{ $svc.port | quote }}
            {{- if not $svc.http }}
            - name: CONNECT_PORT
              value: {{ include "webutil.connectPort" $svc | quote }}
            {{- end }}
            - name: METRICS_PORT
              value: {{ $root.Values.metrics.port | quote }}
            # The process drains in what is left of the grace period after preStop, 5 s before SIGKILL.
            - name: SHUTDOWN_GRACE_MS
              value: {{ mul (sub (sub $svc.terminationGracePeriodSeconds $svc.preStopSeconds) 5) 1000 | quote }}
            {{- if $svc.usesMongo }}
            - name: MONGO_URL
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: MONGO_URL }
            {{- end }}
            {{- if $svc.usesNats }}
            - name: NATS_URL
              value: {{ include "webutil.natsUrl" $root | quote }}
            - name: CRAWL_NATS_PREFIX
              value: {{ $root.Values.nats.streamsPrefix | quote }}
            {{- end }}
            {{- if eq $name "billing" }}
            - name: CHALLENGE_SECRET
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: CHALLENGE_SECRET }
            - name: TURNSTILE_SECRET
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: TURNSTILE_SECRET, optional: true }
            {{- if $stripe }}
            - name: STRIPE_SECRET_KEY
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: STRIPE_SECRET_KEY }
            - name: STRIPE_WEBHOOK_SECRET
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: STRIPE_WEBHOOK_SECRET }
            - name: STRIPE_PRICES
              value: {{ include "webutil.stripePrices" $root | quote }}
            - name: STRIPE_CURRENCY
              value: {{ $root.Values.payments.currency | quote }}
            - name: PAYMENT_GRACE_DAYS
              value: {{ $root.Values.payments.graceDays | default 7 | quote }}
            {{- end }}
            {{- end }}
            {{- if or (eq $name "billing") (eq $name "monitor") }}
            # Account mail and monitor alerts; absent: the dev outbox (decision 0421).
            - name: SMTP_URL
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: SMTP_URL, optional: true }
            {{- end }}
            {{- if or (eq $name "billing") $svc.http }}
            # Billing verifies with it; the edge's pages allow Cloudflare's widget in their CSP.
            - name: TURNSTILE_SITE_KEY
              valueFrom:
                secretKeyRef: { name: {{ $secret }}, key: TURNSTILE_SITE_KEY, optional: true }
            {{- end }}
            {{- range $key, $value := $svc.env }}
            - name: {{ $key }}
              value: {{ $value | quote }}
            {{- end }}
          ports:
            - name: {{ ternary "http" "grpc" (default false $svc.http) }}
              containerPort: {{ $svc.port }}
            {{- if not $svc.http }}
            - name: connect
              containerPort: {{ include "webutil.connectPort" $svc }}
            {{- end }}
            - name: metrics
              containerPort: {{ $root.Values.metrics.port }}
          {{- if $svc.preStopSeconds }}
          # Keeps serving while the pod leaves the Service's endpoints everywhere, so no new call
          # reaches a process that has stopped taking them.
          lifecycle:
            preStop:
              sleep: { seconds: {{ $svc.preStopSeconds }} }
          {{- end }}
          {{- if $svc.http }}
          readinessProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 5
          livenessProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 10
            failureThreshold: 6
          {{- else }}
          # Native gRPC probes on the kit's health service (grpc.health.v1).
          readinessProbe:
            grpc: { port: {{ $svc.port }}, service: readiness }
            periodSeconds: 5
          livenessProbe:
            grpc: { port: {{ $svc.port }}, service: liveness }
            periodSeconds: 10
            failureThreshold: 6
          startupProbe:
            grpc: { port: {{ $svc.port }}, service: liveness }
            periodSeconds: 2
            failureThreshold: 60
          {{- end }}
          resources:
            {{- toYaml $svc.resources | nindent 12 }}
          securityContext:
            {{- include "webutil.containerSecurityContext" $root | nindent 12 }}
          volumeMounts:
            - { name: data, mountPath: /data }
            - { name: tmp, mountPath: /tmp }
            {{- if $svc.browser }}
            - { name: shm, mountPath: /dev/shm }
            {{- end }}
      volumes:
        # Scratch only: state lives in MongoDB and NATS.
        - name: data
          emptyDir: { sizeLimit: 1Gi }
        - name: tmp
          emptyDir: { sizeLimit: 1Gi }
        {{- if $svc.browser }}
        - name: shm
          emptyDir: { medium: Memory, sizeLimit: 512Mi }
        {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $full }}
  labels:
    {{- include "webutil.labels" $root | nindent 4 }}
    {{- include "webutil.selector" . | nindent 4 }}
spec:
  selector:
    {{- include "webutil.selector" . | nindent 4 }}
  ports:
    - name: {{ ternary "http" "grpc" (default false $svc.http) }}
      port: {{ $svc.port }}
      targetPort: {{ $svc.port }}
      {{- if not $svc.http }}
      appProtocol: grpc
    - name: connect
      port: {{ include "webutil.connectPort" $svc }}
      targetPort: {{ include "webutil.connectPort" $svc }}
      appProtocol: http
      {{- end }}
    - name: metrics
      port: {{ $root.Values.metrics.port }}
      targetPort: {{ $root.Values.metrics.port }}
{{- if not $svc.http }}
---
# Every ready pod's address, for the edge's gRPC clients (dns:///...-headless, round robin): a
# ClusterIP pins each HTTP/2 connection to one pod; this lets each edge reach all of them.
apiVersion: v1
kind: Service
metadata:
  name: {{ $full }}-headless
  labels:
    {{- include "webutil.labels" $root | nindent 4 }}
    {{- include "webutil.selector" . | nindent 4 }}
spec:
  clusterIP: None
  selector:
    {{- include "webutil.selector" . | nindent 4 }}
  ports:
    - name: grpc
      port: {{ $svc.port }}
      targetPort: {{ $svc.port }}
      appProtocol: grpc
{{- end }}
{{- if $svc.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $full }}
  labels:
    {{- include "webutil.labels" $root | nindent 4 }}
spec:
  scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: {{ $full }} }
  minReplicas: {{ $svc.autoscaling.minReplicas }}
  maxReplicas: {{ $svc.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target: { type: Utilization, averageUtilization: {{ $svc.autoscaling.targetCPUUtilizationPercentage }} }
{{- end }}
{{- if $svc.pdb }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $full }}
  labels:
    {{- include "webutil.labels" $root | nindent 4 }}
spec:
  minAvailable: {{ $svc.pdb.minAvailable }}
  selector:
    matchLabels:
      {{- include "webutil.selector" . | nindent 6 }}
{{- end }}
{{- if $root.Values.networkPolicy.enabled }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ $full }}
  labels:
    {{- include "webutil.labels" $root | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "webutil.selector" . | nindent 6 }}
  policyTypes: [Ingress, Egress]
  ingress:
    {{- if $svc.http }}
    # Outside traffic reaches the edge only, through the ingress controller.
    - from:
        - namespaceSelector:
            matchLabels: { kubernetes.io/metadata.name: {{ $root.Values.networkPolicy.ingressNamespace }} }
      ports:
        - { port: {{ $svc.port }}, protocol: TCP }
    {{- else }}
    # Internal gRPC and Connect are unauthenticated: only the edge, and the services whose `calls`
    # name this one, may call a service.
    {{- $callers := list "edge" }}
    {{- range $other, $o := $root.Values.services }}
    {{- if has $name ($o.calls | default list) }}{{ $callers = append $callers $other }}{{ end }}
    {{- end }}
    - from:
        - podSelector:
            matchLabels: { app.kubernetes.io/instance: {{ $root.Release.Name }} }
            matchExpressions:
              - { key: app.kubernetes.io/name, operator: In, values: {{ toJson $callers }} }
      ports:
        - { port: {{ $svc.port }}, protocol: TCP }
        - { port: {{ include "webutil.connectPort" $svc }}, protocol: TCP }
    {{- end }}
    # Prometheus scrapes from anywhere in the cluster.
    - from:
        - namespaceSelector: {}
      ports:
        - { port: {{ $root.Values.metrics.port }}, protocol: TCP }
  egress:
    # Cluster DNS.
    - to:
        - namespaceSelector:
            matchLabels: { kubernetes.io/metadata.name: {{ $root.Values.networkPolicy.dnsNamespace }} }
      ports:
        - { port: 53, protocol: UDP }
        - { port: 53, protocol: TCP }
    {{- if $svc.http }}
    # The edge calls the services.
    {{- $callees := list }}
    {{- range $other, $o := $root.Values.services }}
    {{- if not $o.http }}{{ $callees = append $callees $other }}{{ end }}
    {{- end }}
    - to:
        - podSelector:
            matchLabels: { app.kubernetes.io/instance: {{ $root.Release.Name }} }
            matchExpressions:
              - { key: app.kubernetes.io/name, operator: In, values: {{ toJson $callees }} }
    {{- end }}
    {{- with $svc.calls }}
    # The services this one calls (a monitor's runs, a site audit's site-level checks).
    - to:
        - podSelector:
            matchLabels: { app.kubernetes.io/instance: {{ $root.Release.Name }} }
            matchExpressions:
              - { key: app.kubernetes.io/name, operator: In, values: {{ toJson . }} }
    {{- end }}
    {{- if $svc.usesMongo }}
    {{- if $root.Values.mongodb.enabled }}
    - to:
        - podSelector:
            matchLabels:
              {{- include "webutil.selector" (dict "root" $root "name" "mongodb") | nindent 14 }}
      ports:
        - { port: 27017, protocol: TCP }
    {{- else }}
    # The external MongoDB.
    - {{- toYaml $root.Values.networkPolicy.extraEgress.mongodb | nindent 6 }}
    {{- end }}
    {{- end }}
    {{- if $svc.usesNats }}
    {{- if $root.Values.nats.enabled }}
    - to:
        - podSelector:
            matchLabels:
              {{- include "webutil.selector" (dict "root" $root "name" "nats") | nindent 14 }}
      ports:
        - { port: 4222, protocol: TCP }
    {{- else }}
    # The external NATS.
    - {{- toYaml $root.Values.networkPolicy.extraEgress.nats | nindent 6 }}
    {{- end }}
    {{- end }}
    {{- if $internet }}
    {{- if eq $egress "turnstile" }}
    # Cloudflare's Turnstile siteverify (HTTPS), never cluster, node or metadata addresses.
    - to:
        {{- include "webutil.internetPeers" $root | nindent 8 }}
      ports:
        - { port: 443, protocol: TCP }
    {{- else }}
    # Fetches users' URLs: the internet, never cluster, node or metadata addresses.
    - to:
        {{- include "webutil.internetPeers" $root | nindent 8 }}
    {{- end }}
    {{- end }}
{{- end }}
{{- end -}}

{{- define "webutil.serviceMonitorEnabled" -}}
{{- $mode := toString .Values.metrics.serviceMonitor -}}
{{- if eq $mode "auto" -}}
{{- .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" -}}
{{- else -}}
{{- eq $mode "true" -}}
{{- end -}}
{{- end -}}
