import type { FactoryProvider, InjectionToken } from '@nestjs/common';

/** A connection pool, client or anything else a process closes once on its way out. */
export interface Closable {
  end(): Promise<void>;
}

/**
 * The providers of a resource the whole process shares (its Postgres pool): `token` gives what `create`
 * makes, and it is ended when the application shuts down, after every provider that uses it has stopped
 * (Nest runs `onApplicationShutdown` after every `onModuleDestroy`).
 */
export function closedLast<T extends Closable>(
  token: InjectionToken,
  create: () => T,
): [FactoryProvider<T>, FactoryProvider<{ onApplicationShutdown(): Promise<void> }>] {
  return [
    { provide: token, useFactory: create },
    {
      provide: Symbol(`${String(token)}: closed last`),
      useFactory: (resource: T) => ({ onApplicationShutdown: () => resource.end() }),
      inject: [token],
    },
  ];
}
