import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { NestLoggerAdapter } from './nest-logging';
import { startProcessObservability } from './process-observability';
import { stopTracing } from './tracing';

/**
 * The first thing the entry point of a process that runs a Nest application (`apps/*\/src/main.ts`) does:
 * `startProcessObservability`, and every Nest logger writes to the process's root logger.
 */
export function startObservability(app: string): void {
  NestLoggerAdapter.install(startProcessObservability(app));
}

/** Sends the spans still buffered when the application shuts down. */
class TracingShutdown implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await stopTracing();
  }
}

/**
 * Imported by every app's root module: the process's spans are sent before it exits (its last shutdown
 * hook; a no-op with tracing off).
 */
@Module({ providers: [TracingShutdown] })
export class ObservabilityModule {}
