export * from './fatal-errors';
