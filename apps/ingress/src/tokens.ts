import type { IngressConfig, OidcConfig, PostgresConfig, QuotaConfig } from '@lib/config';

/** What the ingress is configured with (the value behind {@link INGRESS_CONFIG}). */
export type IngressModuleConfig = IngressConfig & PostgresConfig & QuotaConfig & OidcConfig;

/** Injection token of the ingress configuration. */
export const INGRESS_CONFIG = Symbol('INGRESS_CONFIG');
/** Injection token of the `PlatformFeatures` the ingress offers (cards, capability checks, quotas). */
export const INGRESS_FEATURES = Symbol('INGRESS_FEATURES');
/** Injection token of the ingress's Postgres pool (agents and API keys). */
export const INGRESS_PG_POOL = Symbol('INGRESS_PG_POOL');
