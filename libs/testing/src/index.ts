export * from './a2ui-schemas';
export * from './call-context';
export * from './kafka';
export * from './kafka-broker';
export * from './platform-processes';
export * from './postgres-server';
export * from './raw-worker';
export * from './test-database';
