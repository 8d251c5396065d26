/** What replaces a secret in a log line. */
export const REDACTED = '[redacted]';

/**
 * Field names whose values are secrets wherever they appear in a logged object (as the field itself, or one
 * or two levels down: `headers.authorization`, `req.headers.authorization`): credentials, API keys, tokens,
 * passwords, worker and webhook secrets, and the environment variables that hold them.
 */
const SECRET_FIELDS = [
  'authorization',
  'Authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'X-API-Key',
  'x-a2a-notification-token',
  'X-A2A-Notification-Token',
  'apiKey',
  'api_key',
  'bearer',
  'token',
  'accessToken',
  'refreshToken',
  'password',
  'secret',
  'credential',
  'credentials',
  'workerSecret',
  'WORKER_SECRET',
  'A2A_DEMO_API_KEY',
  'A2A_DEMO_WORKER_SECRET',
  'ADMIN_BOOTSTRAP_TOKEN',
  'ADMIN_TOKEN',
] as const;

/** Fields holding connection URLs: only the password in them is a secret. */
const URL_FIELDS = ['POSTGRES_URL', 'REDIS_URL', 'TEST_POSTGRES_URL'] as const;

const URL_FIELD_SET: ReadonlySet<string> = new Set(URL_FIELDS);

/** A path segment in pino's redaction syntax (bracketed when it is not an identifier). */
function segment(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `["${name}"]`;
}

/** The pino `redact` paths: every secret field at the top, and one or two levels down. */
export const REDACTED_PATHS: readonly string[] = [...SECRET_FIELDS, ...URL_FIELDS].flatMap(
  (name) => [segment(name).replace(/^\./, ''), `*${segment(name)}`, `*.*${segment(name)}`],
);

/** What a redacted field becomes: a connection URL keeps all but its password; anything else goes. */
export function censor(value: unknown, path: readonly string[]): unknown {
  const field = path[path.length - 1] ?? '';
  return URL_FIELD_SET.has(field) && typeof value === 'string' ? scrubSecrets(value) : REDACTED;
}

/** `scheme://user:password@` → the password. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+@/gi;
/** `Bearer <token>` / `Basic <credentials>` → the token. */
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[\w.~+/=-]+/gi;
/** The platform's own secrets, `a2a_<key id>_<random>` (API keys, `a2aa_` admin, `a2aw_` workers). */
const PLATFORM_SECRET = /\b(a2a[aw]?_[A-Za-z0-9-]+_)[\w-]{16,}/g;
/** `<secret-ish name>: value` or `<name>=value`, quoted or not (headers, query strings, JSON, env dumps). */
const NAMED_SECRET =
  /\b([\w-]*(?:authorization|api[_-]?key|password|passwd|secret|token|credentials?|cookie))(["']?\s*[:=]\s*["']?)([^\s"',;&]+)/gi;

/**
 * Text with every secret it may hold replaced: for messages, error messages and stacks, where a secret
 * could have been interpolated (a URL with its password, an `Authorization` header, a key in a query).
 * Field names that only hold secrets are removed by the `redact` paths instead.
 */
export function scrubSecrets(text: string): string {
  return text
    .replace(URL_PASSWORD, `$1${REDACTED}@`)
    .replace(AUTH_SCHEME, `$1 ${REDACTED}`)
    .replace(PLATFORM_SECRET, `$1${REDACTED}`)
    .replace(NAMED_SECRET, `$1$2${REDACTED}`);
}
