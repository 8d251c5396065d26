export * from './secrets';
export * from './seed';
