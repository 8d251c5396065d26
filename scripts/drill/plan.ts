import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { IService } from 'kubernetes-models/v1/Service';
import type { K8sObject } from '../k8s/kustomize';

/** An HTTP probe as the kubelet runs it (the manifests use httpGet only). */
export interface ProbePlan {
  path: string;
  /** The container port it targets (a named port resolved). */
  containerPort: number;
  initialDelayMs: number;
  periodMs: number;
  timeoutMs: number;
  failureThreshold: number;
  successThreshold: number;
}

/** One pod of a workload, as the drill runs it: one container, one local process. */
export interface PodPlan {
  /** The Deployment or Job. */
  workload: string;
  container: IContainer;
  /** `command` + `args`: `node dist/<entry> …`. */
  argv: string[];
  /** Named container ports → numbers. */
  ports: Map<string, number>;
  liveness: ProbePlan | null;
  readiness: ProbePlan | null;
  preStopMs: number;
  terminationGraceMs: number;
  /** mountPath → Secret name, for the Secret volumes the container mounts. */
  secretMounts: Map<string, string>;
}

export interface DeploymentPlan extends PodPlan {
  /** The least replicas the overlay runs: its autoscaler's minimum (or the Deployment's count). */
  replicas: number;
  /** The pods' labels, which Services select. */
  labels: Record<string, string>;
}

/** What the drill needs of a rendered overlay. */
export interface ClusterPlan {
  jobs: PodPlan[];
  deployments: DeploymentPlan[];
  configMaps: Map<string, Record<string, string>>;
  services: IService[];
}

function ofKind<T>(objects: K8sObject[], kind: string): (T & K8sObject)[] {
  return objects.filter((o) => o.kind === kind) as (T & K8sObject)[];
}

function probePlan(probe: IProbe | undefined, ports: Map<string, number>): ProbePlan | null {
  const get = probe?.httpGet;
  if (!probe || !get) {
    return null;
  }
  const containerPort = typeof get.port === 'number' ? get.port : ports.get(get.port);
  if (containerPort === undefined) {
    throw new Error(`probe on unknown port ${String(get.port)}`);
  }
  return {
    path: get.path ?? '/',
    containerPort,
    initialDelayMs: (probe.initialDelaySeconds ?? 0) * 1_000,
    periodMs: (probe.periodSeconds ?? 10) * 1_000,
    timeoutMs: (probe.timeoutSeconds ?? 1) * 1_000,
    failureThreshold: probe.failureThreshold ?? 3,
    successThreshold: probe.successThreshold ?? 1,
  };
}

function podPlan(workload: string, pod: IPodSpec | undefined): PodPlan {
  const [container, ...others] = pod?.containers ?? [];
  if (!pod || !container || others.length > 0) {
    throw new Error(`${workload}: the drill runs pods of exactly one container`);
  }
  const ports = new Map(
    (container.ports ?? []).map((p) => [p.name ?? String(p.containerPort), p.containerPort]),
  );
  const secretVolumes = new Map(
    (pod.volumes ?? []).flatMap((v) =>
      v.secret?.secretName ? [[v.name, v.secret.secretName] as const] : [],
    ),
  );
  return {
    workload,
    container,
    argv: [...(container.command ?? []), ...(container.args ?? [])],
    ports,
    liveness: probePlan(container.livenessProbe, ports),
    readiness: probePlan(container.readinessProbe, ports),
    preStopMs: (container.lifecycle?.preStop?.sleep?.seconds ?? 0) * 1_000,
    terminationGraceMs: (pod.terminationGracePeriodSeconds ?? 30) * 1_000,
    secretMounts: new Map(
      (container.volumeMounts ?? []).flatMap((m) => {
        const secret = secretVolumes.get(m.name);
        return secret ? [[m.mountPath, secret] as const] : [];
      }),
    ),
  };
}

/** Reads the Jobs, Deployments (with their replica floors), ConfigMaps and Services of an overlay. */
export function clusterPlan(objects: K8sObject[]): ClusterPlan {
  const hpas = ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler');
  return {
    jobs: ofKind<IJob>(objects, 'Job').map((job) =>
      podPlan(job.metadata.name, job.spec?.template.spec),
    ),
    deployments: ofKind<IDeployment>(objects, 'Deployment').map((deployment) => {
      const name = deployment.metadata.name;
      const hpa = hpas.find(
        (h) => h.spec?.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === name,
      );
      return {
        ...podPlan(name, deployment.spec?.template.spec),
        replicas: hpa?.spec?.minReplicas ?? deployment.spec?.replicas ?? 1,
        labels: deployment.spec?.template.metadata?.labels ?? {},
      };
    }),
    configMaps: new Map(
      ofKind<IConfigMap>(objects, 'ConfigMap').map((c) => [c.metadata.name, c.data ?? {}]),
    ),
    services: ofKind<IService>(objects, 'Service'),
  };
}

/** What a pod's environment is built from on this machine instead of a cluster. */
export interface LocalEnvironment {
  /** ConfigMap values replaced by local ones (KAFKA_BROKERS, …), whichever ConfigMap holds them. */
  configOverrides: Record<string, string>;
  /** Variables left out of every process (settings a local stand-in does not speak, e.g. Kafka's TLS). */
  unset?: readonly string[];
  /** The downward API's fields: `metadata.name`, `metadata.namespace`, `spec.nodeName`, … */
  podFields?: Record<string, string>;
  /** Secret name → key → value. */
  secrets: Record<string, Record<string, string>>;
  /** Secret name → a local folder holding one file per key. */
  secretDirs: Record<string, string>;
  /** This replica's container ports → local ports. */
  localPorts: Map<number, number>;
  /** `<service>:<port>` → the local `host:port` of every replica behind it. */
  resolveService: (service: string, port: number) => string[] | null;
}

const SERVICE_TARGET = /^(?:dns:\/\/\/)?([a-z0-9]([-a-z0-9]*[a-z0-9])?)(?:\.[-a-z0-9.]+)?:(\d+)$/;

/**
 * A container's environment as the kubelet would build it, made local: ConfigMap and Secret references
 * resolved from `local`, every `*_PORT` that names one of the container's ports moved to this replica's
 * local port, every `*_HOST` of `0.0.0.0` bound to loopback, Service names replaced by the local addresses
 * of their replicas, and Secret mount paths by local folders.
 */
export function localEnv(
  plan: PodPlan,
  configMaps: Map<string, Record<string, string>>,
  local: LocalEnvironment,
): Record<string, string> {
  const env: Record<string, string> = {};
  const config = (name: string): Record<string, string> => {
    const data = configMaps.get(name);
    if (!data) {
      throw new Error(`${plan.workload}: ConfigMap ${name} is not in the overlay`);
    }
    return data;
  };
  for (const source of plan.container.envFrom ?? []) {
    if (!source.configMapRef) {
      throw new Error(`${plan.workload}: only ConfigMaps are read with envFrom`);
    }
    Object.assign(env, config(source.configMapRef.name ?? ''));
  }
  for (const variable of plan.container.env ?? []) {
    const from = variable.valueFrom;
    if (variable.value !== undefined) {
      env[variable.name] = expand(variable.value, env);
    } else if (from?.configMapKeyRef) {
      const value = config(from.configMapKeyRef.name ?? '')[from.configMapKeyRef.key];
      if (value !== undefined) {
        env[variable.name] = value;
      }
    } else if (from?.fieldRef) {
      const value = local.podFields?.[from.fieldRef.fieldPath];
      if (value === undefined) {
        throw new Error(
          `${plan.workload}: no local value for pod field ${from.fieldRef.fieldPath}`,
        );
      }
      env[variable.name] = value;
    } else if (from?.secretKeyRef) {
      const { name = '', key, optional } = from.secretKeyRef;
      const value = local.secrets[name]?.[key];
      if (value !== undefined) {
        env[variable.name] = value;
      } else if (optional !== true) {
        throw new Error(`${plan.workload}: no local value for Secret ${name} key ${key}`);
      }
    } else {
      throw new Error(`${plan.workload}: ${variable.name} has a source the drill cannot resolve`);
    }
  }
  const unset = new Set(local.unset ?? []);
  return Object.fromEntries(
    Object.entries(env)
      .filter(([name]) => !unset.has(name))
      .map(([name, value]) => [name, localValue(plan, name, value, local)]),
  );
}

/**
 * `$(NAME)` replaced by the value of a variable defined before it, as the kubelet does (`$$` escapes a
 * dollar; a reference to nothing defined is left as it is).
 */
export function expand(value: string, defined: Record<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name?: string) =>
    name === undefined ? '$' : (defined[name] ?? match),
  );
}

function localValue(plan: PodPlan, name: string, value: string, local: LocalEnvironment): string {
  const override = local.configOverrides[name];
  if (override !== undefined) {
    return override;
  }
  if (name.endsWith('_PORT') && local.localPorts.has(Number(value))) {
    return String(local.localPorts.get(Number(value)));
  }
  if (name.endsWith('_HOST') && value === '0.0.0.0') {
    return '127.0.0.1';
  }
  for (const [mountPath, secret] of plan.secretMounts) {
    const dir = local.secretDirs[secret];
    if (dir !== undefined && value.startsWith(`${mountPath}/`)) {
      return `${dir}${value.slice(mountPath.length)}`;
    }
  }
  const target = SERVICE_TARGET.exec(value);
  if (target?.[1] !== undefined && target[3] !== undefined) {
    const addresses = local.resolveService(target[1], Number(target[3]));
    if (addresses) {
      return addresses.join(',');
    }
  }
  return value;
}

/** The container port a Service port sends to, for the Deployment whose pods it selects. */
export function serviceTarget(
  plan: ClusterPlan,
  serviceName: string,
  port: number | string,
): { deployment: DeploymentPlan; containerPort: number } | null {
  const service = plan.services.find((s) => s.metadata?.name === serviceName);
  const servicePort = service?.spec?.ports?.find((p) => p.port === port || p.name === port);
  const selector = Object.entries(service?.spec?.selector ?? {});
  const deployment = plan.deployments.find(
    (d) => selector.length > 0 && selector.every(([key, value]) => d.labels[key] === value),
  );
  if (!servicePort || !deployment) {
    return null;
  }
  const target = servicePort.targetPort ?? servicePort.port;
  const containerPort = typeof target === 'number' ? target : deployment.ports.get(target);
  return containerPort === undefined ? null : { deployment, containerPort };
}
