import { Cluster } from '@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/Cluster';
import { ScheduledBackup } from '@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/ScheduledBackup';
import { ClusterSecretStore } from '@kubernetes-models/external-secrets/external-secrets.io/v1/ClusterSecretStore';
import {
  ExternalSecret,
  type IExternalSecret,
} from '@kubernetes-models/external-secrets/external-secrets.io/v1/ExternalSecret';
import {
  Gateway,
  type IGateway,
} from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import {
  GRPCRoute,
  type IGRPCRoute,
} from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRoute';
import {
  HTTPRoute,
  type IHTTPRoute,
} from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import {
  PodMonitor,
  type IPodMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import {
  PrometheusRule,
  type IPrometheusRule,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import {
  Kafka,
  type IKafka,
} from '@kubernetes-models/strimzi-kafka-operator/kafka.strimzi.io/v1/Kafka';
import { KafkaNodePool } from '@kubernetes-models/strimzi-kafka-operator/kafka.strimzi.io/v1/KafkaNodePool';
import { KafkaTopic } from '@kubernetes-models/strimzi-kafka-operator/kafka.strimzi.io/v1/KafkaTopic';
import {
  KafkaUser,
  type IKafkaUser,
} from '@kubernetes-models/strimzi-kafka-operator/kafka.strimzi.io/v1/KafkaUser';
import { PlatformMetrics } from '@lib/observability';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet, type IStatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import {
  HorizontalPodAutoscaler,
  type IHorizontalPodAutoscaler,
} from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job, type IJob } from 'kubernetes-models/batch/v1/Job';
import {
  NetworkPolicy,
  type INetworkPolicy,
} from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import {
  PodDisruptionBudget,
  type IPodDisruptionBudget,
} from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { Namespace, type INamespace } from 'kubernetes-models/v1/Namespace';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service, type IService } from 'kubernetes-models/v1/Service';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  COMPONENTS,
  OVERLAYS,
  k8sDir,
  parseManifests,
  renderKustomization,
  renderWithComponents,
  type K8sObject,
} from '../scripts/k8s/kustomize';

/** The deployables and the app folder each one's container runs (`node dist/apps/<app>/src/main.js`). */
const APPS: Record<string, string> = {
  'a2a-ingress': 'ingress',
  'a2a-task-service': 'task-service',
  'a2a-relay': 'relay',
  'a2a-push-dispatcher': 'push-dispatcher',
  'a2a-admin-api': 'admin-api',
  'a2a-bridge': 'bridge',
};
/** The Secrets the manifests reference and docs/deploy.md names (who makes each, its keys). */
const SECRETS = new Set([
  'a2a-postgres-runtime',
  'a2a-postgres-app',
  'a2a-redis',
  'a2a-card-signing-key',
  'a2a-admin',
  'a2a-upstream',
  'a2a-relay',
  'a2a-push-dispatcher',
  'a2a-kafka-cluster-ca-cert',
]);
/** Written by an operator in the cluster (CloudNativePG, Strimzi): never an ExternalSecret's target. */
const OPERATOR_SECRETS = new Set([
  'a2a-postgres-app',
  'a2a-relay',
  'a2a-push-dispatcher',
  'a2a-kafka-cluster-ca-cert',
]);
/** The database owner's credentials: the migrations Job's alone. */
const OWNER_SECRET = 'a2a-postgres-app';
/** The downward-API variables every app container sets, before OTEL_RESOURCE_ATTRIBUTES names them. */
const DOWNWARD_ENV: Record<string, string> = {
  POD_NAME: 'metadata.name',
  POD_NAMESPACE: 'metadata.namespace',
  NODE_NAME: 'spec.nodeName',
};
const RESOURCE_ATTRIBUTES =
  'k8s.pod.name=$(POD_NAME),k8s.namespace.name=$(POD_NAMESPACE),k8s.node.name=$(NODE_NAME)';
/** kustomization fields that kustomize v5 deprecates. */
const DEPRECATED_KUSTOMIZE_FIELDS = ['bases', 'patchesStrategicMerge', 'patchesJson6902', 'vars'];
const OPS_PORT = 9464;
/** What a process's shutdown takes at most after its drain: the modules' close (libs/observability). */
const CLOSE_TIMEOUT_S = 10;

/**
 * The schema (a kubernetes-models class) of every kind the overlays, components and examples may contain:
 * the Kubernetes API's, and the CRDs' of the Gateway API, the Prometheus Operator, CloudNativePG, Strimzi and
 * External Secrets.
 */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'gateway.networking.k8s.io/v1/Gateway': Gateway,
  'gateway.networking.k8s.io/v1/HTTPRoute': HTTPRoute,
  'gateway.networking.k8s.io/v1/GRPCRoute': GRPCRoute,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'postgresql.cnpg.io/v1/Cluster': Cluster,
  'postgresql.cnpg.io/v1/ScheduledBackup': ScheduledBackup,
  'kafka.strimzi.io/v1/Kafka': Kafka,
  'kafka.strimzi.io/v1/KafkaNodePool': KafkaNodePool,
  'kafka.strimzi.io/v1/KafkaTopic': KafkaTopic,
  'kafka.strimzi.io/v1/KafkaUser': KafkaUser,
  'external-secrets.io/v1/ExternalSecret': ExternalSecret,
  'external-secrets.io/v1/ClusterSecretStore': ClusterSecretStore,
};

function typeOf(object: K8sObject): string {
  return `${object.apiVersion}/${object.kind}`;
}

/** Schema problems of one object (empty: valid); an object of a kind without a schema is a problem. */
function schemaProblems(object: K8sObject): string[] {
  const where = `${object.kind} ${object.metadata.name}`;
  const Model = MODELS[typeOf(object)];
  if (!Model) {
    return [`${where}: no schema for ${typeOf(object)}`];
  }
  try {
    new Model(object as never).validate();
    return [];
  } catch (error) {
    return [`${where}: ${error instanceof Error ? error.message : String(error)}`];
  }
}

function ofKind<T>(objects: K8sObject[], kind: string): (T & K8sObject)[] {
  return objects.filter((o) => o.kind === kind) as (T & K8sObject)[];
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string>) {
  return (
    selector !== undefined &&
    Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([key, value]) => labels[key] === value)
  );
}

/** A container's environment as the kubelet builds it: envFrom ConfigMaps, then `env` (literals only). */
function literalEnv(container: IContainer, configMaps: IConfigMap[]): Map<string, string> {
  const env = new Map<string, string>();
  for (const source of container.envFrom ?? []) {
    const data = configMaps.find((c) => c.metadata?.name === source.configMapRef?.name)?.data;
    Object.entries(data ?? {}).forEach(([key, value]) => env.set(key, value));
  }
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) {
      env.set(variable.name, variable.value);
    }
  }
  return env;
}

/** What the issue asks of every container of the platform, and what its own contract needs. */
function containerProblems(
  where: string,
  pod: IPodSpec,
  container: IContainer,
  configMaps: IConfigMap[],
): string[] {
  const problems: string[] = [];
  const expect = (ok: boolean, what: string): void => {
    if (!ok) {
      problems.push(`${where}: ${what}`);
    }
  };
  const security = container.securityContext;
  expect(
    security?.runAsNonRoot === true || pod.securityContext?.runAsNonRoot === true,
    'runAsNonRoot',
  );
  expect(security?.readOnlyRootFilesystem === true, 'readOnlyRootFilesystem');
  expect(security?.allowPrivilegeEscalation === false, 'allowPrivilegeEscalation: false');
  expect(security?.capabilities?.drop?.includes('ALL') === true, 'capabilities drop ALL');
  expect(pod.securityContext?.seccompProfile?.type === 'RuntimeDefault', 'seccomp RuntimeDefault');
  expect(pod.automountServiceAccountToken === false, 'no service account token');
  const { requests, limits } = container.resources ?? {};
  expect(requests?.['cpu'] !== undefined && requests['memory'] !== undefined, 'requests');
  expect(limits?.['cpu'] !== undefined && limits['memory'] !== undefined, 'limits');
  for (const source of container.envFrom ?? []) {
    const name = source.configMapRef?.name;
    expect(
      configMaps.some((c) => c.metadata?.name === name),
      `ConfigMap ${name ?? '?'} rendered`,
    );
  }
  for (const variable of container.env ?? []) {
    const secret = variable.valueFrom?.secretKeyRef?.name;
    expect(secret === undefined || SECRETS.has(secret), `Secret ${secret ?? ''} documented`);
  }
  for (const volume of pod.volumes ?? []) {
    const secret = volume.secret?.secretName;
    expect(secret === undefined || SECRETS.has(secret), `Secret ${secret ?? ''} documented`);
  }
  return problems;
}

/** The probes, ports, ops listener and drain budget of a Deployment's container. */
function serviceContainerProblems(
  where: string,
  app: string,
  pod: IPodSpec,
  container: IContainer,
  configMaps: IConfigMap[],
): string[] {
  const problems = containerProblems(where, pod, container, configMaps);
  const expect = (ok: boolean, what: string): void => {
    if (!ok) {
      problems.push(`${where}: ${what}`);
    }
  };
  expect(
    JSON.stringify(container.command) === JSON.stringify(['node', `dist/apps/${app}/src/main.js`]),
    `command runs dist/apps/${app}/src/main.js`,
  );
  const live = container.livenessProbe?.httpGet;
  const ready = container.readinessProbe?.httpGet;
  expect(live?.path === '/livez' && live.port === 'ops', 'liveness probe GET /livez on ops');
  expect(ready?.path === '/readyz' && ready.port === 'ops', 'readiness probe GET /readyz on ops');
  const ports = new Map((container.ports ?? []).map((p) => [p.containerPort, p.name]));
  expect(ports.get(OPS_PORT) === 'ops', `container port ops = ${OPS_PORT}`);
  const env = literalEnv(container, configMaps);
  expect(env.get('OPS_PORT') === String(OPS_PORT), `OPS_PORT=${OPS_PORT}`);
  for (const [name, value] of env) {
    if (name.endsWith('_HOST')) {
      expect(value === '0.0.0.0', `${name} listens on 0.0.0.0`);
    }
    if (name.endsWith('_PORT')) {
      expect(ports.has(Number(value)), `${name}=${value} is a declared container port`);
    }
  }
  const variables = container.env ?? [];
  expect(
    variables.every((v) => v.valueFrom?.secretKeyRef?.name !== OWNER_SECRET),
    `reads no ${OWNER_SECRET} (the database owner is the migrations Job's)`,
  );
  const position = (name: string): number => variables.findIndex((v) => v.name === name);
  for (const [name, fieldPath] of Object.entries(DOWNWARD_ENV)) {
    const variable = variables[position(name)];
    expect(variable?.valueFrom?.fieldRef?.fieldPath === fieldPath, `${name} from ${fieldPath}`);
    expect(
      position(name) >= 0 && position(name) < position('OTEL_RESOURCE_ATTRIBUTES'),
      `${name} defined before OTEL_RESOURCE_ATTRIBUTES (the kubelet expands only earlier ones)`,
    );
  }
  expect(
    variables[position('OTEL_RESOURCE_ATTRIBUTES')]?.value === RESOURCE_ATTRIBUTES,
    `OTEL_RESOURCE_ATTRIBUTES=${RESOURCE_ATTRIBUTES}`,
  );
  const graceS = Number(env.get('SHUTDOWN_GRACE_MS')) / 1_000;
  const preStopS = container.lifecycle?.preStop?.sleep?.seconds ?? 0;
  const terminationS = pod.terminationGracePeriodSeconds ?? 30;
  expect(
    graceS > 0 && preStopS + graceS + CLOSE_TIMEOUT_S < terminationS,
    `preStop ${preStopS} s + SHUTDOWN_GRACE_MS ${graceS} s + close ${CLOSE_TIMEOUT_S} s < ` +
      `terminationGracePeriodSeconds ${terminationS} s`,
  );
  return problems;
}

/** Everything that must hold in every overlay; returns the problems found. */
function platformProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const configMaps = ofKind<IConfigMap>(objects, 'ConfigMap');
  const deployments = ofKind<IDeployment>(objects, 'Deployment');
  const pdbs = ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget');
  const hpas = ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler');
  const policies = ofKind<INetworkPolicy>(objects, 'NetworkPolicy');
  const [namespace, ...moreNamespaces] = ofKind<INamespace>(objects, 'Namespace');

  if (!namespace || moreNamespaces.length > 0) {
    problems.push('exactly one Namespace');
  } else {
    if (namespace.metadata.labels?.['pod-security.kubernetes.io/enforce'] !== 'restricted') {
      problems.push('the Namespace enforces the restricted Pod Security Standard');
    }
    const elsewhere = objects.filter(
      (o) => o.kind !== 'Namespace' && o.metadata.namespace !== namespace.metadata.name,
    );
    elsewhere.forEach((o) => problems.push(`${o.kind} ${o.metadata.name} outside the namespace`));
  }
  objects
    .filter((o) => o.metadata.labels?.['app.kubernetes.io/part-of'] !== 'a2a-platform')
    .forEach((o) => problems.push(`${o.kind} ${o.metadata.name} labelled part-of a2a-platform`));

  const names = deployments.map((d) => d.metadata.name).sort();
  if (JSON.stringify(names) !== JSON.stringify(Object.keys(APPS).sort())) {
    problems.push(`Deployments ${names.join(', ')}`);
  }
  for (const deployment of deployments) {
    const name = deployment.metadata.name;
    const template = deployment.spec?.template;
    const pod = template?.spec;
    const labels = template?.metadata?.labels ?? {};
    if (!pod) {
      problems.push(`${name}: no pod spec`);
      continue;
    }
    // The drill runs every pod as one local process (scripts/drill): no init containers, no sidecars.
    if (pod.containers.length !== 1 || (pod.initContainers?.length ?? 0) > 0) {
      problems.push(`${name}: exactly one container`);
    }
    if (!matches(deployment.spec?.selector.matchLabels, labels)) {
      problems.push(`${name}: selector matches its pods`);
    }
    if (deployment.spec?.strategy?.rollingUpdate?.maxUnavailable !== 0) {
      problems.push(`${name}: rolling update keeps every replica until its successor is ready`);
    }
    for (const container of pod.containers) {
      problems.push(
        ...serviceContainerProblems(
          `${name}/${container.name}`,
          APPS[name] ?? '?',
          pod,
          container,
          configMaps,
        ),
      );
    }
    if (!pdbs.some((p) => matches(p.spec?.selector?.matchLabels, labels))) {
      problems.push(`${name}: a PodDisruptionBudget`);
    }
    if (
      !hpas.some(
        (h) => h.spec?.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === name,
      )
    ) {
      problems.push(`${name}: a HorizontalPodAutoscaler`);
    }
    if (
      !policies.some(
        (p) =>
          matches(p.spec?.podSelector.matchLabels, labels) && (p.spec?.ingress?.length ?? 0) > 0,
      )
    ) {
      problems.push(`${name}: a NetworkPolicy that opens its ports`);
    }
  }

  const denyAll = policies.find(
    (p) =>
      p.spec?.podSelector.matchLabels?.['app.kubernetes.io/part-of'] === 'a2a-platform' &&
      p.spec.policyTypes?.includes('Ingress') === true &&
      p.spec.ingress === undefined,
  );
  if (!denyAll) {
    problems.push('a default-deny ingress NetworkPolicy for every pod of the platform');
  }

  for (const pdb of pdbs) {
    if (pdb.spec?.unhealthyPodEvictionPolicy !== 'AlwaysAllow') {
      problems.push(
        `PodDisruptionBudget ${pdb.metadata.name}: unhealthyPodEvictionPolicy AlwaysAllow`,
      );
    }
  }
  const config = configMaps.find((c) => c.metadata?.name?.startsWith('a2a-config'))?.data ?? {};
  if (config['SCHEMA_MIGRATION'] !== 'wait') {
    problems.push('a2a-config: SCHEMA_MIGRATION=wait (only the migrations Job migrates)');
  }

  for (const service of ofKind<IService>(objects, 'Service')) {
    for (const port of service.spec?.ports ?? []) {
      if (port.name?.includes('grpc') === true && port.appProtocol !== 'kubernetes.io/h2c') {
        problems.push(`Service ${service.metadata.name}: gRPC port ${port.name} appProtocol h2c`);
      }
    }
    const target = deployments.find((d) =>
      matches(service.spec?.selector, d.spec?.template.metadata?.labels ?? {}),
    );
    const portNames = new Set(
      target?.spec?.template.spec?.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name)),
    );
    if (!target) {
      problems.push(`Service ${service.metadata.name}: selects a Deployment`);
    }
    for (const port of service.spec?.ports ?? []) {
      if (typeof port.targetPort !== 'string' || !portNames.has(port.targetPort)) {
        problems.push(
          `Service ${service.metadata.name}: port ${port.name ?? ''} targets a named container port`,
        );
      }
    }
  }

  const jobs = ofKind<IJob>(objects, 'Job');
  const migrate = jobs.find((j) => j.metadata.name === 'a2a-migrate');
  const migratePod = migrate?.spec?.template.spec;
  if (!migratePod || jobs.length !== 1) {
    problems.push('one migrations Job, a2a-migrate');
  } else {
    if (migratePod.containers.length !== 1 || (migratePod.initContainers?.length ?? 0) > 0) {
      problems.push('a2a-migrate: exactly one container');
    }
    const annotations = migrate?.metadata?.annotations ?? {};
    if (
      annotations['argocd.argoproj.io/hook'] !== 'PreSync' ||
      annotations['argocd.argoproj.io/hook-delete-policy'] !== 'BeforeHookCreation'
    ) {
      problems.push('a2a-migrate: an Argo CD PreSync hook, replaced before the next one');
    }
    // Gone soon after it finished, so that applying the next release creates a new Job.
    const ttl = migrate?.spec?.ttlSecondsAfterFinished;
    if (ttl === undefined || ttl > 300) {
      problems.push('a2a-migrate: ttlSecondsAfterFinished of at most 5 minutes');
    }
    if (migratePod.restartPolicy !== 'Never') {
      problems.push(
        'a2a-migrate: restartPolicy Never (retries are new pods, counted by backoffLimit)',
      );
    }
    for (const container of migratePod.containers) {
      const where = `a2a-migrate/${container.name}`;
      problems.push(...containerProblems(where, migratePod, container, configMaps));
      const env = container.env ?? [];
      const url = env.find((v) => v.name === 'POSTGRES_URL')?.valueFrom?.secretKeyRef;
      if (url?.name !== OWNER_SECRET || url.key !== 'uri') {
        problems.push(`${where}: POSTGRES_URL from ${OWNER_SECRET} key uri (the owner migrates)`);
      }
      if (env.find((v) => v.name === 'SCHEMA_RUNTIME_ROLE')?.value !== 'a2a_runtime') {
        problems.push(`${where}: SCHEMA_RUNTIME_ROLE=a2a_runtime (the role the apps connect as)`);
      }
      const command = JSON.stringify(container.command);
      if (command !== JSON.stringify(['node', 'dist/apps/task-service/src/cli.js', 'migrate'])) {
        problems.push(`${where}: command runs the task-service CLI's migrate`);
      }
    }
  }
  return problems;
}

/** The least number of replicas of each app: its autoscaler's minimum, and the Deployment's count if set. */
function replicaFloors(objects: K8sObject[]): Record<string, number> {
  const hpas = ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler');
  return Object.fromEntries(
    ofKind<IDeployment>(objects, 'Deployment').map((deployment) => {
      const name = deployment.metadata.name;
      const hpa = hpas.find((h) => h.spec?.scaleTargetRef.name === name);
      const counts = [hpa?.spec?.minReplicas ?? 1, deployment.spec?.replicas ?? Infinity];
      return [name, Math.min(...counts)];
    }),
  );
}

/** The alerting rules of every PrometheusRule. */
function alertRules(objects: K8sObject[]) {
  return ofKind<IPrometheusRule>(objects, 'PrometheusRule').flatMap((rule) =>
    (rule.spec?.groups ?? []).flatMap((group) =>
      (group.rules ?? []).filter((r) => r.alert !== undefined),
    ),
  );
}

/** PromQL's words that are not series names: aggregation modifiers and binary operators. */
const PROMQL_KEYWORDS = new Set([
  'by',
  'without',
  'and',
  'or',
  'unless',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
]);

/** The metric names a PromQL expression reads: identifiers outside label matchers, strings and ranges. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?/g)]
    .filter(([, name, call]) => call === undefined && !PROMQL_KEYWORDS.has(name ?? ''))
    .map(([, name]) => name ?? '');
  return [...new Set(names)];
}

/** The metrics an alert may read: the platform's catalogue and Prometheus's own `up`. */
function knownMetrics(): Set<string> {
  const catalogue = new PlatformMetrics().registry.getMetricsAsArray().map((m) => m.name);
  return new Set([...catalogue, 'up']);
}

/** GitHub's anchors of a Markdown file's headings (lower case, punctuation dropped, spaces to dashes). */
function headingAnchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6}\s+(.+)$/gm)].map(([, heading]) =>
      (heading ?? '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    ),
  );
}

/** Every kustomization.yaml under k8s/, relative to it. */
function kustomizationFiles(dir = k8sDir()): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name === 'kustomization.yaml')
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The Secret names a rendered platform's pods read (env, envFrom and volumes). */
function referencedSecrets(objects: K8sObject[]): Set<string> {
  const pods = [
    ...ofKind<IDeployment>(objects, 'Deployment').map((d) => d.spec?.template.spec),
    ...ofKind<IJob>(objects, 'Job').map((j) => j.spec?.template.spec),
  ];
  return new Set(
    pods.flatMap((pod) => [
      ...(pod?.volumes ?? []).flatMap((v) => (v.secret?.secretName ? [v.secret.secretName] : [])),
      ...(pod?.containers ?? []).flatMap((c) =>
        (c.env ?? []).flatMap((v) =>
          v.valueFrom?.secretKeyRef?.name ? [v.valueFrom.secretKeyRef.name] : [],
        ),
      ),
    ]),
  );
}

function readDoc(name: string): string {
  return readFileSync(join(k8sDir(), '..', 'docs', name), 'utf8');
}

describe('Kubernetes manifests (k8s/, rendered with kubectl kustomize)', () => {
  const rendered = Object.fromEntries(
    OVERLAYS.map((overlay) => [overlay, renderKustomization(`overlays/${overlay}`)]),
  ) as Record<(typeof OVERLAYS)[number], K8sObject[]>;
  const withComponents = renderWithComponents('production', COMPONENTS);
  const operators = renderKustomization('operators');

  describe.each(OVERLAYS)('overlay %s', (overlay) => {
    const objects = rendered[overlay];

    it('renders, and every object validates against the Kubernetes API schema of its kind', () => {
      expect(objects.length).toBeGreaterThan(20);
      expect(objects.flatMap(schemaProblems)).toEqual([]);
    });

    it('runs every app with probes, requests and limits, non-root on a read-only root, no privileges', () => {
      expect(platformProblems(objects)).toEqual([]);
    });
  });

  describe.each(COMPONENTS)('component %s, added to the production overlay', (component) => {
    const objects = renderWithComponents('production', [component]);

    it('renders, every object validates against its schema, and the platform still holds', () => {
      expect(objects.length).toBeGreaterThan(rendered.production.length);
      expect(objects.flatMap(schemaProblems)).toEqual([]);
      expect(platformProblems(objects)).toEqual([]);
    });
  });

  it('all components together render and validate', () => {
    expect(withComponents.flatMap(schemaProblems)).toEqual([]);
    expect(platformProblems(withComponents)).toEqual([]);
  });

  it('no kustomization uses a field kustomize v5 deprecates', () => {
    const deprecated = kustomizationFiles().flatMap((file) => {
      const fields = Object.keys(parse(readFileSync(file, 'utf8')) as Record<string, unknown>);
      return fields
        .filter((f) => DEPRECATED_KUSTOMIZE_FIELDS.includes(f))
        .map((f) => `${file}: ${f}`);
    });
    expect(kustomizationFiles().length).toBeGreaterThan(15);
    expect(deprecated).toEqual([]);
  });

  it('tracing is off in the base and on with the monitoring component', () => {
    const config = (objects: K8sObject[]) =>
      ofKind<IConfigMap>(objects, 'ConfigMap').find((c) =>
        c.metadata?.name?.startsWith('a2a-config'),
      )?.data ?? {};
    expect(config(rendered.production)['OTEL_EXPORTER_OTLP_ENDPOINT']).toBeUndefined();
    expect(config(withComponents)['OTEL_EXPORTER_OTLP_ENDPOINT']).toMatch(/^http:\/\/.+:4318$/);
  });

  it('every alert has a runbook in docs/observability.md and reads only metrics the platform exports', () => {
    const rules = alertRules(withComponents);
    const anchors = headingAnchors(readDoc('observability.md'));
    const metrics = knownMetrics();
    expect(rules.length).toBeGreaterThanOrEqual(10);
    const problems = rules.flatMap((rule) => {
      const url = rule.annotations?.['runbook_url'] ?? '';
      const [, anchor] = /\/docs\/observability\.md#(.+)$/.exec(url) ?? [];
      const unknown = metricNames(String(rule.expr)).filter((name) => !metrics.has(name));
      return [
        ...(anchor !== undefined && anchors.has(anchor) ? [] : [`${rule.alert}: runbook ${url}`]),
        ...unknown.map((name) => `${rule.alert}: unknown metric ${name}`),
      ];
    });
    expect(problems).toEqual([]);
  });

  it('the metric check can fail: it finds every series name of an expression and nothing else', () => {
    expect(
      metricNames(
        'sum by (pod) (rate(a2a_requests_total{reason=~"A|B"}[5m])) / on (pod) ' +
          'max(min_over_time(a2a_nothing_like_this[15m])) > 0 and up == 0',
      ).sort(),
    ).toEqual(['a2a_nothing_like_this', 'a2a_requests_total', 'up']);
    expect(knownMetrics().has('a2a_nothing_like_this')).toBe(false);
  });

  it("the PodMonitor scrapes every app's ops port", () => {
    const [monitor] = ofKind<IPodMonitor>(withComponents, 'PodMonitor');
    expect(monitor?.spec.podMetricsEndpoints?.map((e) => [e.port, e.path])).toEqual([
      ['ops', '/metrics'],
    ]);
    const scraped = ofKind<IDeployment>(withComponents, 'Deployment').filter((d) =>
      matches(monitor?.spec.selector.matchLabels, d.spec?.template.metadata?.labels ?? {}),
    );
    expect(scraped.map((d) => d.metadata.name).sort()).toEqual(Object.keys(APPS).sort());
  });

  it('the edge routes the public paths and gRPC services to Service ports, on the host of PUBLIC_BASE_URL', () => {
    const services = ofKind<IService>(withComponents, 'Service');
    const config =
      ofKind<IConfigMap>(withComponents, 'ConfigMap').find((c) =>
        c.metadata?.name?.startsWith('a2a-config'),
      )?.data ?? {};
    const host = new URL(config['PUBLIC_BASE_URL'] ?? 'http://unset').hostname;
    const backend = (ref: { name: string; port?: number }) =>
      services.some(
        (s) => s.metadata.name === ref.name && s.spec?.ports?.some((p) => p.port === ref.port),
      )
        ? `${ref.name}:${ref.port ?? 0}`
        : `no Service port ${ref.name}:${ref.port ?? 0}`;
    const http = ofKind<IHTTPRoute>(withComponents, 'HTTPRoute').flatMap((route) =>
      (route.spec?.rules ?? []).flatMap((rule) =>
        (rule.matches ?? []).map((m) => [
          m.path?.value,
          rule.timeouts?.request,
          ...(rule.backendRefs ?? []).map(backend),
        ]),
      ),
    );
    expect(http).toEqual([
      ['/agents/', '0s', 'a2a-ingress:8080'],
      ['/a2a/', '0s', 'a2a-ingress:8080'],
      ['/.well-known/', '0s', 'a2a-ingress:8080'],
      ['/admin/v1/', '0s', 'a2a-admin-api:8070'],
      ['/console/', '0s', 'a2a-admin-api:8070'],
    ]);
    const grpc = ofKind<IGRPCRoute>(withComponents, 'GRPCRoute').flatMap((route) =>
      (route.spec?.rules ?? []).flatMap((rule) =>
        (rule.matches ?? []).map((m) => [
          m.method?.service,
          ...(rule.backendRefs ?? []).map(backend),
        ]),
      ),
    );
    expect(grpc).toEqual([
      ['lf.a2a.v1.A2AService', 'a2a-ingress:50051'],
      ['platform.worker.v1.WorkerService', 'a2a-task-service:50052'],
    ]);
    const [gateway] = ofKind<IGateway>(withComponents, 'Gateway');
    const hostnames = [
      ...(gateway?.spec.listeners.map((l) => l.hostname) ?? []),
      ...ofKind<IHTTPRoute>(withComponents, 'HTTPRoute').flatMap((r) => r.spec?.hostnames ?? []),
      ...ofKind<IGRPCRoute>(withComponents, 'GRPCRoute').flatMap((r) => r.spec?.hostnames ?? []),
    ];
    expect(host).not.toBe('unset');
    expect(new Set(hostnames)).toEqual(new Set([host]));
    expect(config['PUBLIC_GRPC_ADDRESS']).toBe(`${host}:443`);
  });

  it('External Secrets make every Secret the apps read that no operator in the cluster writes', () => {
    const targets = ofKind<IExternalSecret>(withComponents, 'ExternalSecret').map(
      (e) => e.spec?.target?.name ?? e.metadata?.name,
    );
    const wanted = [...referencedSecrets(withComponents)].filter((s) => !OPERATOR_SECRETS.has(s));
    expect(targets.sort()).toEqual(wanted.sort());
    expect(targets.filter((t) => OPERATOR_SECRETS.has(t ?? ''))).toEqual([]);
  });

  it('docs/deploy.md names every Secret the production platform reads', () => {
    const referenced = referencedSecrets(rendered.production);
    const deploy = readDoc('deploy.md');
    expect([...referenced].sort()).toEqual([...SECRETS].sort());
    expect([...referenced].filter((s) => !deploy.includes(`\`${s}\``))).toEqual([]);
  });

  it('dev runs one replica of each app', () => {
    const floors = replicaFloors(rendered.dev);
    const hpas = ofKind<IHorizontalPodAutoscaler>(rendered.dev, 'HorizontalPodAutoscaler');
    expect(Object.values(floors)).toEqual(Object.keys(APPS).map(() => 1));
    expect(hpas.map((h) => h.spec?.maxReplicas)).toEqual(hpas.map(() => 1));
  });

  it('production runs at least two replicas of each app, kept apart by pod anti-affinity', () => {
    const objects = rendered.production;
    expect(Object.entries(replicaFloors(objects)).filter(([, floor]) => floor < 2)).toEqual([]);
    const apart = ofKind<IDeployment>(objects, 'Deployment').filter((deployment) => {
      const labels = deployment.spec?.template.metadata?.labels ?? {};
      const anti = deployment.spec?.template.spec?.affinity?.podAntiAffinity;
      const terms = [
        ...(anti?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
        ...(anti?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map(
          (p) => p.podAffinityTerm,
        ),
      ];
      return terms.some(
        (term) =>
          term.topologyKey === 'kubernetes.io/hostname' &&
          matches(term.labelSelector?.matchLabels, labels),
      );
    });
    expect(apart.map((d) => d.metadata.name).sort()).toEqual(Object.keys(APPS).sort());
  });

  it("the operators' examples validate, and each one not applied by default too", () => {
    const kinds = new Set(operators.map(typeOf));
    expect([...kinds].sort()).toEqual(
      [
        'apps/v1/StatefulSet',
        'kafka.strimzi.io/v1/Kafka',
        'kafka.strimzi.io/v1/KafkaNodePool',
        'kafka.strimzi.io/v1/KafkaTopic',
        'kafka.strimzi.io/v1/KafkaUser',
        'networking.k8s.io/v1/NetworkPolicy',
        'postgresql.cnpg.io/v1/Cluster',
        'postgresql.cnpg.io/v1/ScheduledBackup',
        'v1/ConfigMap',
        'v1/Service',
      ].sort(),
    );
    const separate = [
      ...renderKustomization('operators/cloudnative-pg/recovery'),
      ...renderKustomization('operators/external-secrets'),
      ...parseManifests(
        readFileSync(join(k8sDir(), 'operators/redis/secret.example.yaml'), 'utf8'),
        'operators/redis/secret.example.yaml',
      ),
    ];
    expect(separate.map(typeOf).sort()).toEqual([
      'external-secrets.io/v1/ClusterSecretStore',
      'postgresql.cnpg.io/v1/Cluster',
      'v1/Secret',
    ]);
    expect([...operators, ...separate].flatMap(schemaProblems)).toEqual([]);
  });

  it('Redis meets the restricted Pod Security Standard and keeps every key (noeviction)', () => {
    const [redis] = ofKind<IStatefulSet>(operators, 'StatefulSet');
    const pod = redis?.spec?.template.spec as IPodSpec;
    const problems = pod.containers.flatMap((c) =>
      containerProblems(`a2a-redis/${c.name}`, pod, c, ofKind<IConfigMap>(operators, 'ConfigMap')),
    );
    expect(problems).toEqual([]);
    const conf = ofKind<IConfigMap>(operators, 'ConfigMap')[0]?.data?.['redis.conf'] ?? '';
    expect(conf).toMatch(/^maxmemory-policy noeviction$/m);
  });

  it('Postgres: the apps connect as the managed runtime role, the Job as the owner', () => {
    const cluster = operators.find((o) => o.kind === 'Cluster') as K8sObject & {
      spec: {
        bootstrap: { initdb: { owner: string } };
        managed: {
          roles: {
            name: string;
            login: boolean;
            superuser: boolean;
            passwordSecret: { name: string };
          }[];
        };
      };
    };
    // CloudNativePG names the owner's Secret `<cluster>-app`.
    expect(`${cluster.metadata.name}-app`).toBe(OWNER_SECRET);
    const runtime = cluster.spec.managed.roles.find((r) => r.name === 'a2a_runtime');
    expect(runtime).toMatchObject({
      login: true,
      superuser: false,
      passwordSecret: { name: 'a2a-postgres-runtime' },
    });
    const secrets = referencedSecrets(rendered.production);
    expect(secrets.has('a2a-postgres-runtime')).toBe(true);
  });

  it('Kafka: the production apps reach the TLS + SCRAM listener as KafkaUsers allowed what they do', () => {
    const kafka = operators.find((o) => o.kind === 'Kafka') as K8sObject & IKafka;
    const listener = kafka.spec?.kafka.listeners.find((l) => l.tls);
    expect(listener?.authentication?.type).toBe('scram-sha-512');
    expect(kafka.spec?.kafka.authorization?.type).toBe('simple');
    const config =
      ofKind<IConfigMap>(rendered.production, 'ConfigMap').find((c) =>
        c.metadata?.name?.startsWith('a2a-config'),
      )?.data ?? {};
    expect(config['KAFKA_BROKERS']).toBe(
      `${kafka.metadata.name}-kafka-bootstrap.a2a:${listener?.port ?? 0}`,
    );
    const topic = operators.find((o) => o.kind === 'KafkaTopic');
    expect(topic?.metadata.name).toBe(config['TASK_EVENTS_TOPIC']);
    for (const kind of ['KafkaTopic', 'KafkaNodePool', 'KafkaUser']) {
      const clusters = operators
        .filter((o) => o.kind === kind)
        .map((o) => o.metadata.labels?.['strimzi.io/cluster']);
      expect(new Set(clusters)).toEqual(new Set([kafka.metadata.name]));
    }
    const acls = Object.fromEntries(
      ofKind<IKafkaUser>(operators, 'KafkaUser').map((user) => [
        user.metadata?.name,
        (user.spec?.authorization?.acls ?? []).map(
          (acl) =>
            `${acl.resource.type}:${acl.resource.name ?? ''}:${[...acl.operations].sort().join('+')}`,
        ),
      ]),
    );
    expect(acls).toEqual({
      'a2a-relay': [
        `topic:${topic?.metadata.name ?? ''}:Describe+Write`,
        'cluster::IdempotentWrite',
      ],
      'a2a-push-dispatcher': [
        `topic:${topic?.metadata.name ?? ''}:Describe+Read`,
        `group:${config['PUSH_CONSUMER_GROUP'] ?? ''}:Read`,
      ],
    });
    for (const app of ['a2a-relay', 'a2a-push-dispatcher']) {
      const deployment = ofKind<IDeployment>(rendered.production, 'Deployment').find(
        (d) => d.metadata.name === app,
      );
      const pod = deployment?.spec?.template.spec;
      const container = pod?.containers[0];
      const env = Object.fromEntries(
        (container?.env ?? []).map((v) => [v.name, v.value ?? v.valueFrom?.secretKeyRef]),
      );
      expect(env).toMatchObject({
        KAFKA_TLS: 'true',
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: app,
        KAFKA_SASL_PASSWORD: { name: app, key: 'password' },
      });
      const caFile = container?.env?.find((v) => v.name === 'KAFKA_TLS_CA_FILE')?.value ?? '';
      const mount = container?.volumeMounts?.find((m) => caFile.startsWith(`${m.mountPath}/`));
      const volume = pod?.volumes?.find((v) => v.name === mount?.name);
      expect(volume?.secret?.secretName).toBe(`${kafka.metadata.name}-cluster-ca-cert`);
      expect(volume?.secret?.items).toEqual([{ key: 'ca.crt', path: 'ca.crt' }]);
    }
  });

  it('the schema check rejects what the API server would (so the checks above can fail)', () => {
    const deployment = rendered.production.find((o) => o.kind === 'Deployment') as K8sObject;
    const broken = structuredClone(deployment) as K8sObject & IDeployment;
    const container = broken.spec?.template.spec?.containers[0] as IContainer;
    (container.ports as unknown[])[0] = { name: 'http', containerPort: 'eighty' };
    container.resources = { limits: { cpu: 'a lot' } };
    expect(schemaProblems(broken).join('\n')).toMatch(/containerPort must be integer/);
    expect(schemaProblems(broken).join('\n')).toMatch(/cpu must match format "quantity"/);

    const topic = operators.find((o) => o.kind === 'KafkaTopic') as K8sObject;
    expect(schemaProblems({ ...topic, spec: { partitions: 'twelve' } }).join('\n')).toMatch(
      /partitions/,
    );
    const route = withComponents.find((o) => o.kind === 'HTTPRoute') as K8sObject;
    expect(schemaProblems({ ...route, spec: { rules: 'all' } }).join('\n')).toMatch(/rules/);
    expect(schemaProblems({ ...topic, apiVersion: 'kafka.strimzi.io/v1beta2' })).toEqual([
      `KafkaTopic ${topic.metadata.name}: no schema for kafka.strimzi.io/v1beta2/KafkaTopic`,
    ]);
  });
});
