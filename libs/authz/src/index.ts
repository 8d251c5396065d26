export * from './operations';
export * from './scopes';
