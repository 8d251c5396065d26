export * from './fatal-errors';
export * from './ops';
