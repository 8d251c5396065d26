import { Server, ServerCredentials } from '@grpc/grpc-js';
import { taskPb, workerPb } from '@lib/a2a-protocol';
import type { TaskServiceConfig } from '@lib/config';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { TaskCommands } from '../task-commands';
import { TASK_SERVICE_CONFIG } from '../tokens';
import { WorkerServiceBinding } from './worker-service.binding';

/** How long calls in flight may finish at shutdown when no drain ran before (the drain has its own grace). */
const SHUTDOWN_GRACE_MS = 2_000;

/** Binds the two gRPC servers of the task-service: workers on one port, ingress calls on another. */
@Injectable()
export class GrpcServers implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(GrpcServers.name);
  private readonly workerServer = new Server({ 'grpc.keepalive_time_ms': 10_000 });
  private readonly commandServer = new Server();
  /** Ports actually bound (differs from the configured ones when those are 0). */
  workerPort = 0;
  commandPort = 0;
  private workersStopped: Promise<void> | null = null;
  private commandsStopped: Promise<void> | null = null;

  constructor(
    private readonly workers: WorkerServiceBinding,
    private readonly commands: TaskCommands,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.workerServer.addService(workerPb.WorkerServiceService, this.workers.handlers());
    this.commandServer.addService(taskPb.TaskCommandServiceService, this.commands.handlers());
    const host = this.config.TASK_SERVICE_HOST;
    this.workerPort = await bind(this.workerServer, `${host}:${this.config.WORKER_GRPC_PORT}`);
    this.commandPort = await bind(
      this.commandServer,
      `${host}:${this.config.TASK_SERVICE_GRPC_PORT}`,
    );
    this.logger.log(
      `worker gRPC on ${host}:${this.workerPort}, command gRPC on ${host}:${this.commandPort}`,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    const deadline = Date.now() + SHUTDOWN_GRACE_MS;
    await Promise.all([this.stopWorkers(deadline), this.stopCommands(deadline)]);
  }

  /** Takes no new worker session; the open ones end when the drain hangs them up (or at `deadline`). */
  stopWorkers(deadline: number): Promise<void> {
    this.workersStopped ??= shutdown(this.workerServer, deadline);
    return this.workersStopped;
  }

  /** Takes no new command; those in flight finish until `deadline`, then are cut. */
  stopCommands(deadline: number): Promise<void> {
    this.commandsStopped ??= shutdown(this.commandServer, deadline);
    return this.commandsStopped;
  }
}

function bind(server: Server, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    );
  });
}

function shutdown(server: Server, deadline: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(
      () => {
        server.forceShutdown();
        resolve();
      },
      Math.max(0, deadline - Date.now()),
    );
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
