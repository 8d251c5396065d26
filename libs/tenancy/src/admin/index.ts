export * from './admin-errors';
export * from './agent-definition';
export * from './agent-store';
export * from './credential-store';
export * from './issuer-store';
export * from './tenant-store';
