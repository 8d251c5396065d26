export * from '@lib/ids';
export * from './admin';
export * from './call-context';
export * from './config-changes';
export * from './oidc';
export * from './quotas';
export * from './secrets';
export * from './seed';
