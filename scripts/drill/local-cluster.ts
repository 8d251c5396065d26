import { processEnv } from '@lib/config';
import { freePort } from '@lib/testing';
import type { Endpoints } from './load';
import {
  localEnv,
  serviceTarget,
  type ClusterPlan,
  type DeploymentPlan,
  type LocalEnvironment,
  type PodPlan,
} from './plan';
import { Replica, type ReplicaEvent } from './replica';

/** A stretch of time in which a replica was dead from a SIGKILL, until it served again. */
interface KillWindow {
  replica: Replica;
  from: number;
  to: number | null;
}

/** What the drill supplies in place of the cluster's ConfigMap values, Secrets and DNS. */
export type LocalValues = Omit<LocalEnvironment, 'localPorts' | 'resolveService'> & {
  /** Added to every process's environment (not in the manifests: isolation of this run). */
  extraEnv: Record<string, string>;
};

/**
 * The rendered overlay's Deployments as local processes: each replica a {@link Replica} with ports of its
 * own, every Service name resolved to its replicas' local addresses, the kubelet's probes, and the
 * endpoints the clients may use (ready replicas only).
 */
export class LocalCluster implements Endpoints {
  readonly replicas = new Map<string, Replica[]>();
  readonly events: ReplicaEvent[] = [];
  private readonly kills: KillWindow[] = [];

  private constructor(
    readonly plan: ClusterPlan,
    private readonly values: LocalValues,
    private readonly repoRoot: string,
  ) {}

  /** Picks the local ports of every replica, then builds each one's environment. */
  static async create(
    plan: ClusterPlan,
    values: LocalValues,
    repoRoot: string,
  ): Promise<LocalCluster> {
    const cluster = new LocalCluster(plan, values, repoRoot);
    const ports = new Map<string, Map<number, number>[]>();
    for (const deployment of plan.deployments) {
      const slots: Map<number, number>[] = [];
      for (let i = 0; i < deployment.replicas; i++) {
        const local = new Map<number, number>();
        for (const containerPort of deployment.ports.values()) {
          local.set(containerPort, await freePort());
        }
        slots.push(local);
      }
      ports.set(deployment.workload, slots);
    }
    const resolveService = (service: string, port: number): string[] | null => {
      const target = serviceTarget(plan, service, port);
      const slots = target ? ports.get(target.deployment.workload) : undefined;
      if (!target || !slots) {
        return null;
      }
      return slots.map((slot) => `127.0.0.1:${slot.get(target.containerPort) ?? 0}`);
    };
    for (const deployment of plan.deployments) {
      cluster.replicas.set(
        deployment.workload,
        (ports.get(deployment.workload) ?? []).map(
          (localPorts, i) =>
            new Replica(
              `${deployment.workload}-${i}`,
              deployment,
              cluster.env(deployment, {
                ...values,
                localPorts,
                resolveService,
                podFields: { ...values.podFields, 'metadata.name': `${deployment.workload}-${i}` },
              }),
              localPorts,
              repoRoot,
              (event) => cluster.events.push(event),
            ),
        ),
      );
    }
    return cluster;
  }

  /** Runs a Job's pod to completion (its deadline: activeDeadlineSeconds of the manifests, 600 s). */
  async runJob(name: string, timeoutMs = 600_000): Promise<number | null> {
    const job = this.plan.jobs.find((j) => j.workload === name);
    if (!job) {
      throw new Error(`no Job ${name} in the overlay`);
    }
    const env = this.env(job, {
      ...this.values,
      localPorts: new Map(),
      resolveService: () => null,
      podFields: { ...this.values.podFields, 'metadata.name': name },
    });
    const pod = new Replica(name, job, env, new Map(), this.repoRoot, (event) =>
      this.events.push(event),
    );
    pod.start();
    return pod.complete(timeoutMs);
  }

  deployment(name: string): DeploymentPlan {
    const found = this.plan.deployments.find((d) => d.workload === name);
    if (!found) {
      throw new Error(`no Deployment ${name} in the overlay`);
    }
    return found;
  }

  of(deployment: string): Replica[] {
    return this.replicas.get(deployment) ?? [];
  }

  all(): Replica[] {
    return [...this.replicas.values()].flat();
  }

  /** The local `host:port` of every replica of a Service's port (ready or not: DNS of a headless Service). */
  addresses(service: string, port: number | string): string[] {
    const target = serviceTarget(this.plan, service, port);
    if (!target) {
      throw new Error(`no Service ${service} port ${port}`);
    }
    return this.of(target.deployment.workload).map(
      (replica) => `127.0.0.1:${replica.port(target.containerPort)}`,
    );
  }

  ready(service: 'ingress' | 'admin'): string[] {
    const name = service === 'ingress' ? 'a2a-ingress' : 'a2a-admin-api';
    const target = serviceTarget(this.plan, name, 'http');
    if (!target) {
      return [];
    }
    return this.of(target.deployment.workload)
      .filter((replica) => replica.ready)
      .map((replica) => `http://127.0.0.1:${replica.port(target.containerPort)}`);
  }

  killedAround(baseUrl: string, sentAt: number, failedAt: number): boolean {
    const port = Number(new URL(baseUrl).port);
    // The attempt and the kill window (with 1 s to spare after the replica is ready again) overlap. Judged
    // by when the attempt was sent, not by when its failure was seen: a busy client sees a failure late,
    // which must not make it the failure of a live replica.
    return this.kills.some(
      ({ replica, from, to }) =>
        [...replica.localPorts.values()].includes(port) &&
        failedAt >= from &&
        (to === null || sentAt <= to + 1_000),
    );
  }

  /** SIGKILL, then the kubelet's restart of the container in the same pod; resolves once it serves again. */
  async killAndRestart(replica: Replica, readyTimeoutMs: number): Promise<void> {
    const window: KillWindow = { replica, from: Date.now(), to: null };
    this.kills.push(window);
    await replica.kill();
    replica.start();
    await replica.waitReady(readyTimeoutMs);
    window.to = Date.now();
  }

  private env(plan: PodPlan, local: LocalEnvironment): Record<string, string> {
    return {
      PATH: processEnv()['PATH'] ?? '',
      ...this.values.extraEnv,
      ...localEnv(plan, this.plan.configMaps, local),
    };
  }
}
