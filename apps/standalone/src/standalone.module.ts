import type { PlatformConfig } from '@lib/config';
import { Module, type DynamicModule, type Provider } from '@nestjs/common';
// The standalone process is the one place that composes other apps' modules (ARCHITECTURE.md).
import { AdminApiModule } from '../../admin-api/src/admin-api.module';
import { AgentCardKeys } from '../../ingress/src/cards/agent-card.keys';
import { IngressModule } from '../../ingress/src/ingress.module';
import { A2aOperations } from '../../ingress/src/operations/a2a-operations';
import { LocalCommits } from '../../ingress/src/streaming/local-commits';
import type * as PushDispatcher from '../../push-dispatcher/src/push-dispatcher.module';
import { PUSH_SIGNING_KEY } from '../../push-dispatcher/src/tokens';
import type * as Relay from '../../relay/src/relay.module';
import { TaskCommands } from '../../task-service/src/task-commands';
import { TaskServiceModule } from '../../task-service/src/task-service.module';
import { TaskWriter } from '../../task-service/src/write/task-writer';
import { InProcessOperations } from './in-process-operations';
import type { StandalonePlan } from './local-servers';
import { WriterCommits } from './writer-commits';

/**
 * Every deployable in one process: the local default (`npm start`). `plan` says which of the optional ones
 * run and what the platform offers (local-servers.ts: the relay and the push dispatcher need their servers).
 * Those two are loaded only when they run: a standalone without them (no Kafka on a laptop, the bench) never
 * loads kafkajs or BullMQ (ADR 0017).
 */
@Module({})
export class StandaloneModule {
  static forRoot(config: PlatformConfig, plan: StandalonePlan): DynamicModule {
    const taskService = TaskServiceModule.forRoot(config, plan.features);
    // The ingress calls the task-service of this process directly (ADR 0007).
    const operations: Provider = {
      provide: A2aOperations,
      useFactory: (commands: TaskCommands) => new InProcessOperations(commands),
      inject: [TaskCommands],
    };
    // Its feed takes the events the task-service commits here without reading them back (ADR 0008).
    const localCommits: Provider = {
      provide: LocalCommits,
      useFactory: (writer: TaskWriter) => new WriterCommits(writer),
      inject: [TaskWriter],
    };
    const ingress = IngressModule.forRoot(
      config,
      operations,
      [taskService],
      [localCommits],
      plan.features,
    );
    // Webhooks are signed with the card key, which the ingress publishes in its JWK Set.
    const signingKey: Provider = {
      provide: PUSH_SIGNING_KEY,
      useFactory: (keys: AgentCardKeys) => keys.current,
      inject: [AgentCardKeys],
    };
    return {
      module: StandaloneModule,
      imports: [
        taskService,
        ingress,
        AdminApiModule.forRoot(config),
        ...(plan.relay ? [relayModule().forRoot(config)] : []),
        ...(plan.pushDispatcher
          ? [pushDispatcherModule().forRoot(config, signingKey, [ingress])]
          : []),
      ],
    };
  }
}

function relayModule(): typeof Relay.RelayModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when it runs (StandaloneModule)
  return (require('../../relay/src/relay.module') as typeof Relay).RelayModule;
}

function pushDispatcherModule(): typeof PushDispatcher.PushDispatcherModule {
  const loaded =
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when it runs (StandaloneModule)
    require('../../push-dispatcher/src/push-dispatcher.module') as typeof PushDispatcher;
  return loaded.PushDispatcherModule;
}
