/**
 * `@lib/ids`: the branded ids (tenant, agent, task, principal, credential) and the call context, with no
 * dependency, so that every lib and app can type its tenant (libs/tenancy re-exports them for its users).
 */
export * from './call-context';
export * from './ids';
