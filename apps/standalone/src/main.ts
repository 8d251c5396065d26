import {
  loadConfig,
  localPostgresSchema,
  platformSchema,
  processEnv,
  type PlatformConfig,
} from '@lib/config';
import { createPool, migrationsDir, prepareSchema, whenDatabaseReachable } from '@lib/event-store';
import { drainHttpApp, OpsServer, startObservability, startupReport } from '@lib/observability';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { dirname } from 'node:path';
import 'reflect-metadata';
import { serveConsole } from '../../admin-api/src/console';
import { GrpcServers } from '../../task-service/src/grpc/grpc-servers';
import { demoWorkerSecret, EXAMPLE_AGENTS, seedDemoTenant } from './demo-tenant';
import { startLocalServers, type LocalServers } from './local-servers';
import { StandaloneModule } from './standalone.module';
import { importUpstreamExample } from './upstream-example';
import { WorkerSupervisor } from './worker-supervisor';

async function bootstrap(): Promise<void> {
  const logger = new Logger('Standalone');
  const env = loadConfig(platformSchema);
  const servers = await startLocalServers(
    env,
    loadConfig(localPostgresSchema),
    dirname(migrationsDir()),
    (message) => logger.log(message),
  );
  try {
    await run({ ...env, POSTGRES_URL: servers.postgresUrl }, servers, logger);
  } catch (error) {
    await servers.embedded?.stop();
    throw error;
  }
}

async function run(config: PlatformConfig, servers: LocalServers, logger: Logger): Promise<void> {
  const ops = await OpsServer.start(config);
  // A database that is not up yet (a machine booting, a restart in progress) is waited for, not a failure.
  await prepareSchema(config.POSTGRES_URL, config.SCHEMA_MIGRATION, startupReport(logger));
  await whenDatabaseReachable(
    async () => {
      const pool = createPool(config.POSTGRES_URL, {
        max: 1,
        applicationName: 'a2a-standalone:seed',
      });
      await seedDemoTenant(pool, config).finally(() => pool.end());
    },
    (message) => logger.warn(message),
  );

  const app = await NestFactory.create(StandaloneModule.forRoot(config, servers.plan), {
    bodyParser: false,
  });
  drainHttpApp(app, 'ingress-http');
  serveConsole(app, config.ADMIN_CONSOLE_DIR);
  await app.listen(config.INGRESS_PORT, config.INGRESS_HOST);
  const { workerPort } = app.get(GrpcServers);

  const supervisor = new WorkerSupervisor(
    `${config.TASK_SERVICE_HOST}:${workerPort}`,
    (agentId) => demoWorkerSecret(config, agentId),
    // The database found or started here (the bridge reads the imported agents from it).
    { ...processEnv(), POSTGRES_URL: config.POSTGRES_URL },
  );
  if (config.SPAWN_EXAMPLE_WORKERS) {
    EXAMPLE_AGENTS.forEach((agentId) => supervisor.start(agentId));
  }
  if (config.START_BRIDGE && config.UPSTREAM_SECRETS_KEY) {
    supervisor.startBridge();
  } else if (config.START_BRIDGE) {
    logger.warn('the bridge is off: UPSTREAM_SECRETS_KEY is unset, imported agents are not served');
  }
  if (config.START_UPSTREAM_EXAMPLE) {
    supervisor.startUpstreamExample(
      config.UPSTREAM_EXAMPLE_PORT,
      config.UPSTREAM_EXAMPLE_GRPC_PORT,
    );
    void importUpstreamExample(config, (message) => logger.log(message));
  }
  const base = config.PUBLIC_BASE_URL ?? `http://${config.INGRESS_HOST}:${config.INGRESS_PORT}`;
  logger.log(`A2A platform ready: ${base}/.well-known/agent-card.json (API key header X-API-Key)`);
  logger.log(`web console: ${base}/console/ (admin API under ${base}/admin/v1)`);
  logger.log(`ops endpoints on ${ops.url} (/livez, /readyz, /metrics)`);
  // The embedded Postgres goes last: everything above still uses it while it stops.
  ops.serve(app, {
    graceMs: config.SHUTDOWN_GRACE_MS,
    logger,
    beforeClose: () => supervisor.stop(),
    afterClose: async () => {
      await servers.embedded?.stop();
    },
  });
}

startObservability('standalone');
bootstrap().catch((error: unknown) => {
  new Logger('Standalone').fatal(error);
  process.exit(1);
});
