import { Client } from 'pg';
import { NOTICE_CHANNEL, parseNotice, type Notice } from './notices';
import { retryDelayMs } from './retry-delay';

type Listener = (notice: Notice) => void;

export interface NoticeListenerOptions {
  /**
   * `application_name` of the LISTEN connection (see {@link PoolOptions.applicationName}) when this listener
   * is the one that opens it: the listeners of a process share one connection per database.
   */
  applicationName: string;
  /** The channel listened to; {@link NOTICE_CHANNEL} when not given. */
  channel?: string;
  /**
   * A connection of its own instead of the process's shared one: for a listener that comes and goes with its
   * clients (the admin API's change streams), whose connection says whether anyone listens.
   */
  ownConnection?: boolean;
  /** Where connection losses and failed reconnects are reported. */
  warn?: (message: string) => void;
  /** Where a re-established connection is reported. */
  info?: (message: string) => void;
}

/**
 * Receives notices of one channel over Postgres LISTEN. The listeners of a process share one connection per
 * database, which listens on each of their channels: every NOTIFY wakes every backend that listens in its
 * database, whatever the channel, so each further connection would cost Postgres a wake-up per commit
 * (ADR 0016). The connection is kept: when it drops (a restart, `pg_terminate_backend`, a network fault) it
 * reconnects with capped, jittered backoff and listens again. Notices are hints: everyone who relies on them
 * also polls durable state, and is told through {@link onReconnected} when notices may have been missed, so
 * they can catch up at once.
 */
export class NoticeListener {
  private readonly listeners = new Set<Listener>();
  private readonly reconnectListeners = new Set<() => void>();
  private connection: SharedListen | null = null;
  readonly channel: string;

  constructor(
    private readonly connectionString: string,
    private readonly options: NoticeListenerOptions,
  ) {
    this.channel = options.channel ?? NOTICE_CHANNEL;
  }

  /** Whether the LISTEN connection is up right now. */
  get connected(): boolean {
    return this.connection?.connected ?? false;
  }

  /**
   * Listens. Resolves once listening, or once the first attempt failed: the listener then keeps trying in the
   * background (consumers poll meanwhile), so a process is never held up or ended by a database that is away.
   */
  async start(): Promise<void> {
    if (this.connection) {
      return;
    }
    this.connection = this.options.ownConnection
      ? SharedListen.own(this.connectionString, this.options.applicationName)
      : SharedListen.of(this.connectionString, this.options.applicationName);
    await this.connection.join(this);
  }

  async stop(): Promise<void> {
    const connection = this.connection;
    this.connection = null;
    await connection?.leave(this);
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

  /** A notice of this listener's channel arrived. */
  deliver(notice: Notice): void {
    this.listeners.forEach((listener) => listener(notice));
  }

  /** The connection is back after a loss. */
  reconnected(): void {
    this.options.info?.('notice connection re-established');
    this.reconnectListeners.forEach((listener) => listener());
  }

  warn(message: string): void {
    this.options.warn?.(message);
  }
}

/** The one LISTEN connection of a process to one database, and the listeners on it. */
class SharedListen {
  private static readonly open = new Map<string, SharedListen>();

  private readonly members = new Set<NoticeListener>();
  private client: Client | null = null;
  /** The attempt in progress, which every joining listener waits for. */
  private connecting: Promise<void> | null = null;
  private failures = 0;
  private everConnected = false;
  private retryTimer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly connectionString: string,
    private readonly applicationName: string,
  ) {}

  /** The process's connection to `connectionString`, opened with `applicationName` if there is none yet. */
  static of(connectionString: string, applicationName: string): SharedListen {
    let shared = SharedListen.open.get(connectionString);
    if (!shared) {
      shared = new SharedListen(connectionString, applicationName);
      SharedListen.open.set(connectionString, shared);
    }
    return shared;
  }

  /** A connection for one listener alone. */
  static own(connectionString: string, applicationName: string): SharedListen {
    return new SharedListen(connectionString, applicationName);
  }

  get connected(): boolean {
    return this.client !== null;
  }

  async join(member: NoticeListener): Promise<void> {
    const newChannel = !this.channels().has(member.channel);
    this.members.add(member);
    if (this.client && newChannel) {
      // A failed LISTEN is a lost connection: the reconnect listens on every channel again.
      await this.client.query(`LISTEN ${member.channel}`).catch(() => undefined);
    } else if (!this.client && !this.retryTimer) {
      // (While a retry waits for its time, the new listener waits with it, as the others do.)
      await this.attempt();
    }
  }

  /** The connection attempt in progress, or a new one. */
  private attempt(): Promise<void> {
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  async leave(member: NoticeListener): Promise<void> {
    this.members.delete(member);
    if (this.members.size > 0) {
      if (this.client && !this.channels().has(member.channel)) {
        await this.client.query(`UNLISTEN ${member.channel}`).catch(() => undefined);
      }
      return;
    }
    if (SharedListen.open.get(this.connectionString) === this) {
      SharedListen.open.delete(this.connectionString);
    }
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private channels(): Set<string> {
    return new Set([...this.members].map((member) => member.channel));
  }

  private get stopped(): boolean {
    return this.members.size === 0;
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.connectionString,
      application_name: this.applicationName,
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
        this.members.forEach((member) =>
          member.warn(`notice connection lost (${why}); reconnecting`),
        );
        this.scheduleReconnect();
      }
    };
    client.on('notification', (message) => {
      const notice = message.payload ? parseNotice(message.payload) : null;
      if (notice) {
        this.members.forEach((member) => {
          if (member.channel === message.channel) {
            member.deliver(notice);
          }
        });
      }
    });
    client.on('error', (error) => onLost(error.message));
    client.on('end', () => onLost('connection ended'));
    try {
      await client.connect();
      // Listeners may join while this listens: until every channel of theirs is listened to.
      const listening = new Set<string>();
      for (;;) {
        const pending = [...this.channels()].filter((channel) => !listening.has(channel));
        if (pending.length === 0) {
          break;
        }
        for (const channel of pending) {
          await client.query(`LISTEN ${channel}`);
          listening.add(channel);
        }
      }
    } catch (error) {
      lost = true;
      await client.end().catch(() => undefined);
      this.failures += 1;
      if (this.failures === 1 || this.failures % 30 === 0) {
        this.members.forEach((member) =>
          member.warn(`notice connection failed (attempt ${this.failures}): ${String(error)}`),
        );
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
      this.members.forEach((member) => member.reconnected());
    }
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) {
      return;
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) {
        void this.attempt();
      }
    }, retryDelayMs(this.failures));
    this.retryTimer.unref();
  }
}
