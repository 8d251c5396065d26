import { CONFIG_CHANNEL, NoticeListener } from '@lib/event-store';

/**
 * Tells a process that tenants, agents, credentials or issuers changed, so that it drops what it cached of
 * them: a trigger on those tables notifies {@link CONFIG_CHANNEL} in the changing transaction, and every
 * replica hears it within milliseconds of the commit. When the LISTEN connection was lost (notices in
 * between are gone), its return counts as a change too; caches keep a short TTL as the last resort.
 */
export class ConfigChanges {
  private readonly listener: NoticeListener;
  private readonly subscribers = new Set<() => void>();

  constructor(connectionString: string, applicationName: string, warn: (message: string) => void) {
    this.listener = new NoticeListener(connectionString, {
      applicationName,
      channel: CONFIG_CHANNEL,
      warn,
    });
    // Every message on the channel is a change; its payload says nothing more.
    this.listener.subscribe(() => this.changed());
    this.listener.onReconnected(() => this.changed());
  }

  /** Calls `onChange` after every change from now on. */
  subscribe(onChange: () => void): () => void {
    this.subscribers.add(onChange);
    return () => this.subscribers.delete(onChange);
  }

  /** Listens (Nest calls it when the module starts: the class is a provider of the apps as it is). */
  onModuleInit(): Promise<void> {
    return this.listener.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.listener.stop();
  }

  private changed(): void {
    for (const subscriber of this.subscribers) {
      subscriber();
    }
  }
}
