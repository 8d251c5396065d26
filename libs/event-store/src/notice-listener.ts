import { Client } from 'pg';
import { NOTICE_CHANNEL, parseNotice, type Notice } from './notices';

type Listener = (notice: Notice) => void;

/**
 * Receives notices over Postgres LISTEN on a dedicated connection and reconnects when it drops. Notices are
 * hints: consumers also poll durable state, so a notice lost during a reconnect only delays work.
 */
export class NoticeListener {
  private readonly listeners = new Set<Listener>();
  private client: Client | null = null;
  private stopped = false;

  constructor(
    private readonly connectionString: string,
    private readonly warn: (message: string) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.connectionString });
    client.on('notification', (message) => {
      const notice = message.payload ? parseNotice(message.payload) : null;
      if (notice) {
        for (const listener of this.listeners) {
          listener(notice);
        }
      }
    });
    client.on('error', (error) => {
      this.warn(`notice connection lost: ${error.message}`);
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
        this.warn(`notice reconnect failed: ${String(error)}`);
        this.client = dead;
        this.reconnectLater(dead);
      });
    }, 500).unref();
  }
}
