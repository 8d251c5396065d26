import { adminClientSchema, loadConfig } from '@lib/config';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const USAGE = `usage: npm run admin -- <command> [arguments] [options]
  tenants create <tenant> --name <display name> [--rps <n>] [--max-active-tasks <n>]
  tenants list | get <tenant> | suspend <tenant> | resume <tenant>
  tenants delete <tenant>           step 1: the tenant's calls are refused
  tenants purge <tenant>            step 2: removes everything it owns
  tenants quotas <tenant> [--rps <n|none>] [--max-active-tasks <n|none>]
  tenants usage <tenant>            requests this second and active tasks, beside the quotas
  agents put <tenant> <agent> --file <definition.json>
  agents list <tenant> | get <tenant> <agent> | delete <tenant> <agent>
  agents import <tenant> <agent> --card-url <URL> [--header "Name: value"]… [--binding JSONRPC|HTTP+JSON|GRPC]
                [--oauth2-token-url <URL> --oauth2-client-id <id> --oauth2-client-secret <secret> [--oauth2-scope <s>]]
                                    hosts an existing A2A server (docs/upstream.md); again to change it
  agents sync <tenant> <agent>      reads an imported agent's card again
  agents upstream <tenant> <agent>  where an imported agent forwards to (header names only)
  keys issue <tenant> --principal <id> [--scopes a,b,…] [--label <text>] [--expires <RFC 3339>]
  keys list <tenant> | revoke <tenant> <key id>
  workers issue <tenant> <agent> [--label <text>]
  workers list <tenant> <agent> | revoke <tenant> <agent> <credential id>
  admin-keys issue --principal <id> [--label <text>] | list | revoke <key id>
  audit query <tenant> [--from <t>] [--to <t>] [--principal <id>] [--operation <op>] [--outcome <o>]
                       [--resource <r>] [--limit <n>] [--cursor <c>]
  audit verify <tenant>
  push list <tenant> [--task <id>] [--state pending|sending|delivered|dead] [--limit <n>] [--cursor <c>]
                                    webhook deliveries, newest first
  push redrive <tenant> <delivery id>
                                    sends a dead delivery again, from its first attempt
The admin API is ADMIN_API_URL (default http://127.0.0.1:8080, the standalone process); the token is
ADMIN_TOKEN (a platform admin token, or a tenant API key with the scope tenant:admin). Answers are printed
as JSON; the exit code is 1 when the API refused the command or \`audit verify\` found a broken chain.`;

interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
}

type Options = Partial<Record<string, string>> & { header?: string[] };

const OPTIONS = [
  'name',
  'rps',
  'max-active-tasks',
  'file',
  'principal',
  'scopes',
  'label',
  'expires',
  'from',
  'to',
  'operation',
  'outcome',
  'resource',
  'limit',
  'cursor',
  'task',
  'state',
  'card-url',
  'binding',
  'oauth2-token-url',
  'oauth2-client-id',
  'oauth2-client-secret',
  'oauth2-scope',
] as const;

const segment = (value: string | undefined): string => {
  if (!value) {
    throw new UsageError();
  }
  return encodeURIComponent(value);
};

class UsageError extends Error {}

function usage(): never {
  throw new UsageError();
}

/** `--header "Name: value"` options as an object; a header without a colon is a usage error. */
function headersOf(lines: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':');
      if (colon <= 0) {
        throw new UsageError();
      }
      return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
    }),
  );
}

/** A quota option: a positive integer, or `none` for the platform default. */
function quota(value: string | undefined): number | null | undefined {
  if (value === undefined) {
    return undefined;
  }
  return value === 'none' ? null : Number(value);
}

/** The options of `audit query` and `push list` that are query parameters of their routes. */
const AUDIT_FILTERS = [
  'from',
  'to',
  'principal',
  'operation',
  'outcome',
  'resource',
  'limit',
  'cursor',
] as const;
const PUSH_FILTERS = ['task', 'state', 'limit', 'cursor'] as const;

/** `?name=value&…` of the options given among `names`, or nothing. */
function search(options: Options, names: readonly string[]): string {
  const query = new URLSearchParams();
  for (const name of names) {
    const value = options[name];
    if (value !== undefined) {
      query.set(name, value);
    }
  }
  const text = query.toString();
  return text ? `?${text}` : '';
}

/** The HTTP call a command line stands for. */
function callOf(positionals: readonly string[], options: Options): Call {
  const [group, command, a, b, c] = positionals;
  const t = () => `/admin/v1/tenants/${segment(a)}`;
  const quotas = () => {
    const entries = Object.entries({
      requestsPerSecond: quota(options['rps']),
      maxActiveTasks: quota(options['max-active-tasks']),
    }).filter(([, v]) => v !== undefined);
    return entries.length > 0 ? { quotas: Object.fromEntries(entries) } : {};
  };
  const key = (extra: object) => ({
    principalId: options['principal'],
    ...(options['label'] !== undefined ? { label: options['label'] } : {}),
    ...(options['expires'] !== undefined ? { expiresAt: options['expires'] } : {}),
    ...extra,
  });
  switch (`${group ?? ''} ${command ?? ''}`) {
    case 'tenants create':
      return {
        method: 'POST',
        path: '/admin/v1/tenants',
        body: { tenantId: a, displayName: options['name'] ?? a, ...quotas() },
      };
    case 'tenants list':
      return { method: 'GET', path: '/admin/v1/tenants' };
    case 'tenants get':
      return { method: 'GET', path: t() };
    case 'tenants suspend':
      return { method: 'POST', path: `${t()}/suspend` };
    case 'tenants resume':
      return { method: 'POST', path: `${t()}/resume` };
    case 'tenants delete':
      return { method: 'DELETE', path: t() };
    case 'tenants purge':
      return { method: 'POST', path: `${t()}/purge`, body: { confirm: a } };
    case 'tenants usage':
      return { method: 'GET', path: `${t()}/usage` };
    case 'tenants quotas':
      return { method: 'PATCH', path: t(), body: quotas() };
    case 'agents put': {
      const file = options['file'];
      if (!file) {
        throw new UsageError();
      }
      return {
        method: 'PUT',
        path: `${t()}/agents/${segment(b)}`,
        body: JSON.parse(readFileSync(file, 'utf8')) as unknown,
      };
    }
    case 'agents import':
      return {
        method: 'POST',
        path: `${t()}/agents/${segment(b)}/import`,
        body: {
          cardUrl: options['card-url'] ?? usage(),
          ...(options.header ? { headers: headersOf(options.header) } : {}),
          ...(options['binding'] !== undefined ? { binding: options['binding'] } : {}),
          ...(options['oauth2-token-url'] !== undefined
            ? {
                oauth2: {
                  tokenUrl: options['oauth2-token-url'],
                  clientId: options['oauth2-client-id'] ?? usage(),
                  clientSecret: options['oauth2-client-secret'] ?? usage(),
                  ...(options['oauth2-scope'] !== undefined
                    ? { scope: options['oauth2-scope'] }
                    : {}),
                },
              }
            : {}),
        },
      };
    case 'agents sync':
      return { method: 'POST', path: `${t()}/agents/${segment(b)}/sync` };
    case 'agents upstream':
      return { method: 'GET', path: `${t()}/agents/${segment(b)}/upstream` };
    case 'agents list':
      return { method: 'GET', path: `${t()}/agents` };
    case 'agents get':
      return { method: 'GET', path: `${t()}/agents/${segment(b)}` };
    case 'agents delete':
      return { method: 'DELETE', path: `${t()}/agents/${segment(b)}` };
    case 'keys issue':
      return {
        method: 'POST',
        path: `${t()}/api-keys`,
        body: key(options['scopes'] !== undefined ? { scopes: options['scopes'].split(',') } : {}),
      };
    case 'keys list':
      return { method: 'GET', path: `${t()}/api-keys` };
    case 'keys revoke':
      return { method: 'DELETE', path: `${t()}/api-keys/${segment(b)}` };
    case 'workers issue':
      return {
        method: 'POST',
        path: `${t()}/agents/${segment(b)}/worker-credentials`,
        body: options['label'] !== undefined ? { label: options['label'] } : {},
      };
    case 'workers list':
      return { method: 'GET', path: `${t()}/agents/${segment(b)}/worker-credentials` };
    case 'workers revoke':
      return {
        method: 'DELETE',
        path: `${t()}/agents/${segment(b)}/worker-credentials/${segment(c)}`,
      };
    case 'admin-keys issue':
      return { method: 'POST', path: '/admin/v1/admin-keys', body: key({}) };
    case 'admin-keys list':
      return { method: 'GET', path: '/admin/v1/admin-keys' };
    case 'admin-keys revoke':
      return { method: 'DELETE', path: `/admin/v1/admin-keys/${segment(a)}` };
    case 'audit query':
      return { method: 'GET', path: `${t()}/audit${search(options, AUDIT_FILTERS)}` };
    case 'audit verify':
      return { method: 'POST', path: `${t()}/audit/verify` };
    case 'push list':
      return { method: 'GET', path: `${t()}/push-deliveries${search(options, PUSH_FILTERS)}` };
    case 'push redrive':
      return { method: 'POST', path: `${t()}/push-deliveries/${segment(b)}/redrive` };
    default:
      throw new UsageError();
  }
}

/** The operators' command line over the admin API (README "Operating the platform"). */
async function main(args: string[]): Promise<number> {
  let call: Call;
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        ...Object.fromEntries(OPTIONS.map((name) => [name, { type: 'string' as const }])),
        header: { type: 'string', multiple: true },
      },
    });
    call = callOf(positionals, values as Options);
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(USAGE);
      return 1;
    }
    throw error;
  }
  const config = loadConfig(adminClientSchema);
  const response = await fetch(`${config.ADMIN_API_URL.replace(/\/+$/, '')}${call.path}`, {
    method: call.method,
    headers: {
      Authorization: `Bearer ${config.ADMIN_TOKEN}`,
      ...(call.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
  });
  const text = await response.text();
  const answer = text ? (JSON.parse(text) as unknown) : null;
  console.log(answer !== null ? JSON.stringify(answer, null, 2) : `(${response.status})`);
  // `audit verify` of a broken chain answers 200 with ok: false; the command then fails too.
  const broken = (answer as { ok?: unknown } | null)?.ok === false;
  return response.ok && !broken ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
