/** Test doubles of an identity provider, for integration and end-to-end tests only. */
export * from './jwks-server';
export * from './test-keys';
