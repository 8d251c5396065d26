export * from './event-store';
export * from './migrate';
export * from './postgres';
