/**
 * The public entry of `@lib/upstream`: agents imported from existing A2A servers (docs/upstream.md). The card
 * import (fetch, signature check, mapping to a card definition), the sealed secrets and the store the admin
 * API writes and the bridge reads.
 */
export * from './card-fetch';
export * from './extended-card';
export * from './oauth-token';
export * from './secret-box';
export * from './upstream-card';
export * from './upstream-client';
export * from './upstream-store';
