export * from './raw-worker';
export * from './test-database';
