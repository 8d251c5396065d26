import { loadConfig, pushAdminClientSchema } from '@lib/config';
import { parseArgs } from 'node:util';

const USAGE = `usage: npm run push -- <command> [options]
  list --tenant <id> [--task <id>] [--state pending|sending|delivered|dead] [--limit <n>]
                         a tenant's webhook deliveries, newest first
  redrive --tenant <id> <delivery-id>
                         send a dead delivery again
The platform is PUSH_ADMIN_URL (default http://127.0.0.1:8080, the standalone process), the operator token
PUSH_ADMIN_TOKEN.`;

/** The operators' command line over the push dispatcher's delivery routes (docs/push.md "Operating"). */
async function main(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      task: { type: 'string' },
      state: { type: 'string' },
      limit: { type: 'string' },
    },
  });
  const [command, deliveryId] = positionals;
  if (!values.tenant || (command !== 'list' && command !== 'redrive')) {
    console.error(USAGE);
    return 1;
  }
  const config = loadConfig(pushAdminClientSchema);
  const query = new URLSearchParams({ tenant: values.tenant });
  let path: string;
  let method = 'GET';
  if (command === 'list') {
    for (const key of ['task', 'state', 'limit'] as const) {
      const value = values[key];
      if (value !== undefined) {
        query.set(key, value);
      }
    }
    path = 'deliveries';
  } else {
    if (!deliveryId) {
      console.error(USAGE);
      return 1;
    }
    path = `deliveries/${encodeURIComponent(deliveryId)}/redrive`;
    method = 'POST';
  }
  const response = await fetch(`${config.PUSH_ADMIN_URL}/admin/push/${path}?${query.toString()}`, {
    method,
    headers: { Authorization: `Bearer ${config.PUSH_ADMIN_TOKEN}` },
  });
  const body: unknown = await response.json();
  console.log(JSON.stringify(body, null, 2));
  return response.ok ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
