import { Client } from 'pg';
import { NOTICE_CHANNEL, parseNotice, type Notice } from './notices';
import { retryDelayMs } from './retry-delay';

type Listener = (notice: Notice) => void;

export interface NoticeListenerOptions {
  /** `application_name` of the LISTEN connection (see {@link PoolOptions.applicationName}). */
  applicationName: string;
  /** The channel listened to; {@link NOTICE_CHANNEL} when not given. */
  channel?: string;
  /** Where connection losses and failed reconnects are reported. */
  warn?: (message: string) => void;
  /** Where a re-established connection is reported. */
  info?: (message: string) => void;
}

/**
 * Receives notices over Postgres LISTEN on a dedicated connection, and keeps that connection: when it drops
 * (a restart, `pg_terminate_backend`, a network fault) it reconnects with capped, jittered backoff and
 * listens again. Notices are hints: everyone who relies on them also polls durable state, and is told
 * through {@link onReconnected} when notices may have been missed, so they can catch up at once.
 */
export class NoticeListener {
  private readonly listeners = new Set<Listener>();
  private readonly reconnectListeners = new Set<() => void>();
  private client: Client | null = null;
  private stopped = false;
  private failures = 0;
  private everConnected = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly warn: (message: string) => void;
  private readonly info: (message: string) => void;

  constructor(
    private readonly connectionString: string,
    private readonly options: NoticeListenerOptions,
  ) {
    this.warn = options.warn ?? (() => undefined);
    this.info = options.info ?? (() => undefined);
  }

  /** Whether the LISTEN connection is up right now. */
  get connected(): boolean {
    return this.client !== null;
  }

  /**
   * Listens. Resolves once listening, or once the first attempt failed: the listener then keeps trying in the
   * background (consumers poll meanwhile), so a process is never held up or ended by a database that is away.
   */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` each time the connection is back after a loss (notices in between are lost). */
  onReconnected(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.connectionString,
      application_name: this.options.applicationName,
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
    });
    let lost = false;
    const onLost = (why: string): void => {
      if (lost) {
        return;
      }
      lost = true;
      if (this.client === client) {
        this.client = null;
        this.warn(`notice connection lost (${why}); reconnecting`);
        this.scheduleReconnect();
      }
    };
    client.on('notification', (message) => {
      const notice = message.payload ? parseNotice(message.payload) : null;
      if (notice) {
        this.listeners.forEach((listener) => listener(notice));
      }
    });
    client.on('error', (error) => onLost(error.message));
    client.on('end', () => onLost('connection ended'));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel ?? NOTICE_CHANNEL}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => undefined);
      this.failures += 1;
      if (this.failures === 1 || this.failures % 30 === 0) {
        this.warn(`notice connection failed (attempt ${this.failures}): ${String(error)}`);
      }
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    const recovered = this.failures > 0 || this.everConnected;
    this.failures = 0;
    this.everConnected = true;
    this.client = client;
    if (recovered) {
      this.info('notice connection re-established');
      this.reconnectListeners.forEach((listener) => listener());
    }
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) {
      return;
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) {
        void this.connect();
      }
    }, retryDelayMs(this.failures));
    this.retryTimer.unref();
  }
}
