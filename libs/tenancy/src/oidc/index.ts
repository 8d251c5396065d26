/** OIDC/JWT bearer authentication (issue 12); the test identity provider stays in `./testing`. */
export * from './jwt.authenticator';
export * from './jwt.errors';
export { OIDC_PRINCIPAL_PREFIX, oidcPrincipalId } from './oidc-claims';
export * from './oidc-issuer';
