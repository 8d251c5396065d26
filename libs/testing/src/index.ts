export * from './kafka';
export * from './platform-processes';
export * from './raw-worker';
export * from './test-database';
