import type { TaskServiceConfig } from '@lib/config';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { Client } from 'pg';
import { NOTICE_CHANNEL, parseNotice, type Notice } from './notices';
import { TASK_SERVICE_CONFIG } from './tokens';

type Listener = (notice: Notice) => void;

/**
 * Receives cross-replica notices over Postgres LISTEN on a dedicated connection, reconnecting when it drops.
 * Notices are hints: every consumer also polls durable state, so a notice lost during a reconnect only
 * delays work, never loses it.
 */
@Injectable()
export class NoticeBus implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(NoticeBus.name);
  private readonly listeners = new Set<Listener>();
  private client: Client | null = null;
  private stopped = false;

  constructor(@Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig) {}

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.config.POSTGRES_URL });
    client.on('notification', (message) => {
      const notice = message.payload ? parseNotice(message.payload) : null;
      if (notice) {
        for (const listener of this.listeners) {
          listener(notice);
        }
      }
    });
    client.on('error', (error) => {
      this.logger.warn(`notice connection lost: ${error.message}`);
      this.reconnectLater(client);
    });
    client.on('end', () => this.reconnectLater(client));
    await client.connect();
    await client.query(`LISTEN ${NOTICE_CHANNEL}`);
    this.client = client;
  }

  private reconnectLater(dead: Client): void {
    if (this.stopped || this.client !== dead) {
      return;
    }
    this.client = null;
    setTimeout(() => {
      this.connect().catch((error: unknown) => {
        this.logger.warn(`notice reconnect failed: ${String(error)}`);
        this.client = dead;
        this.reconnectLater(dead);
      });
    }, 500).unref();
  }
}
