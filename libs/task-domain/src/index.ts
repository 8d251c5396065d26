export * from './task.commands';
export * from './task.decide';
export * from './task.errors';
export * from './task.events';
export * from './task.state';
export * from './task.stream';
export * from './task.stream-response';
export * from './task.transitions';
