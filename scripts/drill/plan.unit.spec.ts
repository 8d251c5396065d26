import { describe, expect, it } from 'vitest';
import { renderKustomization } from '../k8s/kustomize';
import { clusterPlan, expand, localEnv, serviceTarget, type LocalEnvironment } from './plan';
import { brokenRules, streamGaps, type DrillResult } from './report';

const plan = clusterPlan(renderKustomization('overlays/production'));

function deployment(name: string) {
  const found = plan.deployments.find((d) => d.workload === name);
  if (!found) {
    throw new Error(`no ${name}`);
  }
  return found;
}

const local: LocalEnvironment = {
  configOverrides: { KAFKA_BROKERS: '127.0.0.1:9092' },
  unset: ['KAFKA_TLS', 'KAFKA_TLS_CA_FILE'],
  podFields: {
    'metadata.name': 'a2a-ingress-0',
    'metadata.namespace': 'a2a',
    'spec.nodeName': 'here',
  },
  secrets: {
    'a2a-postgres-app': { uri: 'postgres://postgres@127.0.0.1:5432/a2a_drill' },
    'a2a-postgres-runtime': { uri: 'postgres://a2a_runtime@127.0.0.1:5432/a2a_drill' },
    'a2a-redis': { url: 'redis://127.0.0.1:6379' },
    'a2a-relay': { password: 'relay-secret' },
  },
  secretDirs: { 'a2a-card-signing-key': '/tmp/drill/a2a-card-signing-key' },
  localPorts: new Map([
    [8080, 18080],
    [50051, 18051],
    [9464, 19464],
  ]),
  resolveService: (service, port) =>
    service === 'a2a-task-service' && port === 50053 ? ['127.0.0.1:1', '127.0.0.1:2'] : null,
};

describe('the drill reads the production overlay as a cluster would run it', () => {
  it('runs the migrations Job and two replicas of each Deployment', () => {
    expect(plan.jobs.map((j) => j.argv)).toEqual([
      ['node', 'dist/apps/task-service/src/cli.js', 'migrate'],
    ]);
    expect(plan.deployments.map((d) => [d.workload, d.replicas])).toEqual(
      expect.arrayContaining([
        ['a2a-ingress', 2],
        ['a2a-task-service', 2],
        ['a2a-relay', 2],
        ['a2a-push-dispatcher', 2],
        ['a2a-admin-api', 2],
      ]),
    );
    const ingress = deployment('a2a-ingress');
    expect(ingress.readiness).toMatchObject({
      path: '/readyz',
      containerPort: 9464,
      periodMs: 5_000,
    });
    expect(ingress.preStopMs).toBe(5_000);
    expect(ingress.terminationGraceMs).toBe(40_000);
  });

  it("builds a replica's environment: ports moved, loopback, Services, Secrets and mounts resolved", () => {
    const env = localEnv(deployment('a2a-ingress'), plan.configMaps, local);
    expect(env).toMatchObject({
      INGRESS_HOST: '127.0.0.1',
      INGRESS_PORT: '18080',
      A2A_GRPC_PORT: '18051',
      OPS_HOST: '127.0.0.1',
      OPS_PORT: '19464',
      TASK_SERVICE_URLS: '127.0.0.1:1,127.0.0.1:2',
      AGENT_CARD_SIGNING_KEY_FILE: '/tmp/drill/a2a-card-signing-key/signing-key.pem',
      POSTGRES_URL: 'postgres://a2a_runtime@127.0.0.1:5432/a2a_drill',
      REDIS_URL: 'redis://127.0.0.1:6379',
      KAFKA_BROKERS: '127.0.0.1:9092',
      SHUTDOWN_GRACE_MS: '20000',
      SCHEMA_MIGRATION: 'wait',
      POD_NAME: 'a2a-ingress-0',
      OTEL_RESOURCE_ATTRIBUTES:
        'k8s.pod.name=a2a-ingress-0,k8s.namespace.name=a2a,k8s.node.name=here',
    });
  });

  it('runs the migrations Job as the owner, granting the role the apps connect as', () => {
    const [job] = plan.jobs;
    expect(job && localEnv(job, plan.configMaps, local)).toMatchObject({
      POSTGRES_URL: 'postgres://postgres@127.0.0.1:5432/a2a_drill',
      SCHEMA_RUNTIME_ROLE: 'a2a_runtime',
    });
  });

  it("leaves out what the local stand-ins do not speak (the relay's Kafka TLS)", () => {
    const relay = localEnv(deployment('a2a-relay'), plan.configMaps, local);
    expect(relay).not.toHaveProperty('KAFKA_TLS');
    expect(relay).not.toHaveProperty('KAFKA_TLS_CA_FILE');
    expect(relay).toMatchObject({ KAFKA_SASL_PASSWORD: 'relay-secret' });
  });

  it('expands $(VAR) references to variables defined before, as the kubelet does', () => {
    expect(expand('a=$(A),b=$(B),$$(A)', { A: '1' })).toBe('a=1,b=$(B),$(A)');
  });

  it('leaves out an optional Secret it has no value for, and refuses a required one', () => {
    const admin = localEnv(deployment('a2a-admin-api'), plan.configMaps, local);
    expect(admin).not.toHaveProperty('ADMIN_BOOTSTRAP_TOKEN');
    expect(() =>
      localEnv(deployment('a2a-relay'), plan.configMaps, { ...local, secrets: {} }),
    ).toThrow(/no local value for Secret/);
  });

  it('follows a Service port to the container port of the pods it selects', () => {
    expect(serviceTarget(plan, 'a2a-task-service', 50053)).toMatchObject({
      deployment: { workload: 'a2a-task-service' },
      containerPort: 50053,
    });
    expect(serviceTarget(plan, 'a2a-ingress', 'http')?.containerPort).toBe(8080);
    expect(serviceTarget(plan, 'a2a-kafka-kafka-bootstrap', 9092)).toBeNull();
  });
});

describe('the drill judges streams and rules', () => {
  it('a snapshot covers what came before it; later events must each arrive once', () => {
    expect(streamGaps([3, 5, 6], [1, 2, 3, 4, 5, 6])).toEqual({ missing: [4], duplicates: [] });
    expect(streamGaps([3, 4, 4, 5, 6], [1, 2, 3, 4, 5, 6])).toEqual({
      missing: [],
      duplicates: [4],
    });
  });

  it('fails on an error that is not retryable, a lost task or a late shutdown', () => {
    const passing: DrillResult = {
      migrations: {
        exitCode: 0,
        ms: 300,
        waitedForSchema: ['a2a-ingress-0', 'a2a-ingress-1'],
        readyBeforeJob: [],
      },
      replicas: { 'a2a-ingress': 2 },
      sent: 10,
      adminCalls: 2,
      accepted: 10,
      lost: [],
      abandoned: [],
      errors: [{ at: 0, kind: 'HTTP 503 with Retry-After', allowed: true, detail: '' }],
      streams: [
        {
          agent: 'echo',
          taskId: 't',
          ids: [1],
          resumes: 0,
          afterEnd: 0,
          completed: true,
          failure: null,
        },
      ],
      gaps: [],
      unreplayed: [],
      shutdowns: [],
      kills: [],
      events: [],
      workerSessions: {},
    };
    expect(brokenRules(passing)).toEqual([]);
    expect(
      brokenRules({
        ...passing,
        migrations: {
          ...passing.migrations,
          waitedForSchema: ['a2a-ingress-0'],
          readyBeforeJob: ['a2a-ingress-1'],
        },
        errors: [{ at: 0, kind: 'ECONNREFUSED from a live replica', allowed: false, detail: '' }],
        lost: [{ taskId: 't', how: 'SendMessage', state: 'TASK_STATE_WORKING' }],
        shutdowns: [
          {
            replica: 'a2a-ingress-0',
            preStopMs: 5_000,
            exitMs: 35_000,
            exitCode: null,
            killedAtDeadline: true,
            reportedMs: null,
          },
        ],
      }),
    ).toEqual([
      '1 replicas did not say they wait for the schema before the migrations Job',
      '1 replicas were ready before the migrations Job ran: a2a-ingress-1',
      '1 client-visible errors that are not retryable',
      '1 tasks lost',
      '1 replicas did not exit 0 within terminationGracePeriodSeconds',
    ]);
  });
});
