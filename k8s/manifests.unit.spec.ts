import { ObjectMeta } from '@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
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
import { Service, type IService } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OVERLAYS, renderKustomization, type K8sObject } from '../scripts/k8s/kustomize';

/** The deployables and the app folder each one's container runs (`node dist/apps/<app>/src/main.js`). */
const APPS: Record<string, string> = {
  'a2a-ingress': 'ingress',
  'a2a-task-service': 'task-service',
  'a2a-relay': 'relay',
  'a2a-push-dispatcher': 'push-dispatcher',
  'a2a-admin-api': 'admin-api',
  'a2a-bridge': 'bridge',
};
/** The Secrets the manifests reference and docs/deploy.md tells operators to provide. */
const SECRETS = new Set([
  'a2a-postgres-app',
  'a2a-redis',
  'a2a-card-signing-key',
  'a2a-admin',
  'a2a-upstream',
]);
const OPS_PORT = 9464;
/** What a process's shutdown takes at most after its drain: the modules' close (libs/observability). */
const CLOSE_TIMEOUT_S = 10;

/** The Kubernetes API's schemas (kubernetes-models) of every kind the overlays may contain. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

const quantity = z.union([z.number(), z.string().regex(/^\d+(\.\d+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$/)]);
/**
 * The operators' kinds of k8s/operators: no registry package carries their schemas, so their metadata is
 * checked with the API's ObjectMeta schema and their spec with the fields the platform relies on.
 */
const CUSTOM_SPECS: Record<string, z.ZodType> = {
  'postgresql.cnpg.io/v1/Cluster': z.object({
    instances: z.number().int().min(1),
    storage: z.object({ size: quantity }),
    bootstrap: z.object({ initdb: z.object({ database: z.string(), owner: z.string() }) }),
  }),
  'kafka.strimzi.io/v1beta2/Kafka': z.object({
    kafka: z.object({
      listeners: z
        .array(
          z.object({
            name: z.string().regex(/^[a-z0-9]{1,11}$/),
            port: z.number().int().min(9092),
            type: z.enum([
              'internal',
              'cluster-ip',
              'route',
              'loadbalancer',
              'nodeport',
              'ingress',
            ]),
            tls: z.boolean(),
          }),
        )
        .min(1),
      config: z.record(z.union([z.string(), z.number(), z.boolean()])),
    }),
    entityOperator: z.object({ topicOperator: z.object({}) }),
  }),
  'kafka.strimzi.io/v1beta2/KafkaNodePool': z.object({
    replicas: z.number().int().min(1),
    roles: z.array(z.enum(['controller', 'broker'])).min(1),
    storage: z.object({ type: z.enum(['jbod', 'persistent-claim', 'ephemeral']) }),
  }),
  'kafka.strimzi.io/v1beta2/KafkaTopic': z.object({
    partitions: z.number().int().min(1),
    replicas: z.number().int().min(1),
    config: z.record(z.union([z.string(), z.number(), z.boolean()])),
  }),
};

function typeOf(object: K8sObject): string {
  return `${object.apiVersion}/${object.kind}`;
}

/** Schema problems of one object (empty: valid); an object of a kind without a schema is a problem. */
function schemaProblems(object: K8sObject): string[] {
  const where = `${object.kind} ${object.metadata.name}`;
  const Model = MODELS[typeOf(object)];
  const spec = CUSTOM_SPECS[typeOf(object)];
  try {
    if (Model) {
      new Model(object as never).validate();
      return [];
    }
    if (spec) {
      new ObjectMeta(object.metadata).validate();
      const parsed = spec.safeParse(object['spec']);
      return parsed.success
        ? []
        : parsed.error.issues.map((i) => `${where}: spec.${i.path.join('.')}: ${i.message}`);
    }
  } catch (error) {
    return [`${where}: ${error instanceof Error ? error.message : String(error)}`];
  }
  return [`${where}: no schema for ${typeOf(object)}`];
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

  for (const service of ofKind<IService>(objects, 'Service')) {
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
    if (migratePod.restartPolicy !== 'Never') {
      problems.push(
        'a2a-migrate: restartPolicy Never (retries are new pods, counted by backoffLimit)',
      );
    }
    for (const container of migratePod.containers) {
      const where = `a2a-migrate/${container.name}`;
      problems.push(...containerProblems(where, migratePod, container, configMaps));
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

describe('Kubernetes manifests (k8s/, rendered with kubectl kustomize)', () => {
  const rendered = Object.fromEntries(
    OVERLAYS.map((overlay) => [overlay, renderKustomization(`overlays/${overlay}`)]),
  ) as Record<(typeof OVERLAYS)[number], K8sObject[]>;

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

  it("the operators' examples validate and name what the platform reads", () => {
    const objects = renderKustomization('operators');
    expect(objects.map(typeOf).sort()).toEqual(Object.keys(CUSTOM_SPECS).sort());
    expect(objects.flatMap(schemaProblems)).toEqual([]);

    const base = renderKustomization('base');
    const config = ofKind<IConfigMap>(base, 'ConfigMap')[0]?.data ?? {};
    const find = (kind: string) => objects.find((o) => o.kind === kind);
    const kafka = find('Kafka') as K8sObject & {
      spec: { kafka: { listeners: { port: number }[] } };
    };
    const plainPort = kafka.spec.kafka.listeners[0]?.port;
    expect(config['KAFKA_BROKERS']).toBe(`${kafka.metadata.name}-kafka-bootstrap:${plainPort}`);
    expect(find('KafkaTopic')?.metadata.name).toBe(config['TASK_EVENTS_TOPIC']);
    for (const kind of ['KafkaTopic', 'KafkaNodePool']) {
      expect(find(kind)?.metadata.labels?.['strimzi.io/cluster']).toBe(kafka.metadata.name);
    }
    // CloudNativePG names the application Secret `<cluster>-app`; every app reads POSTGRES_URL from it.
    expect(SECRETS.has(`${find('Cluster')?.metadata.name ?? ''}-app`)).toBe(true);
  });

  it('the schema check rejects what the API server would (so the checks above can fail)', () => {
    const deployment = rendered.production.find((o) => o.kind === 'Deployment') as K8sObject;
    const broken = structuredClone(deployment) as K8sObject & IDeployment;
    const container = broken.spec?.template.spec?.containers[0] as IContainer;
    (container.ports as unknown[])[0] = { name: 'http', containerPort: 'eighty' };
    container.resources = { limits: { cpu: 'a lot' } };
    expect(schemaProblems(broken).join('\n')).toMatch(/containerPort must be integer/);
    expect(schemaProblems(broken).join('\n')).toMatch(/cpu must match format "quantity"/);

    const topic = renderKustomization('operators').find(
      (o) => o.kind === 'KafkaTopic',
    ) as K8sObject;
    const badTopic = { ...topic, metadata: { name: 42 }, spec: { partitions: 0 } } as never;
    expect(schemaProblems(badTopic).join('\n')).toMatch(/name must be string/);
    expect(schemaProblems({ ...topic, spec: { partitions: 0 } }).join('\n')).toMatch(
      /spec.partitions/,
    );
  });
});
