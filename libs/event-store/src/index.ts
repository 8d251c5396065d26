export * from './database-errors';
export * from './event-store';
export * from './migrate';
export * from './notice-listener';
export * from './notices';
export * from './postgres';
export * from './retry-delay';
export * from './task-log';
