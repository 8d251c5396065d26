import type { PlatformConfig } from '@lib/config';
import { createPool } from '@lib/event-store';
import { AgentStore, CredentialStore, tenantIdOf } from '@lib/tenancy';
import { UpstreamStore } from '@lib/upstream';
import { setTimeout as sleep } from 'node:timers/promises';
import { UpstreamImporter } from '../../admin-api/src/upstream-importer';

/** The demo tenant's agent that the example A2A server is imported as. */
export const UPSTREAM_EXAMPLE_AGENT = 'upstream-example';
/** Tries while the example server starts (it is a child process started at the same time). */
const ATTEMPTS = 60;
const PAUSE_MS = 500;

/**
 * Imports the example A2A server (`examples/upstream-agent`, a child of `npm start`) into the demo tenant as
 * `upstream-example`, the way an operator imports any A2A server (docs/upstream.md). Again on every start:
 * an unchanged card changes nothing.
 */
export async function importUpstreamExample(
  config: PlatformConfig,
  log: (message: string) => void,
): Promise<void> {
  const pool = createPool(config.POSTGRES_URL, {
    max: 1,
    applicationName: 'a2a-standalone:upstream-example',
  });
  const importer = new UpstreamImporter(
    config,
    new AgentStore(pool),
    new CredentialStore(pool),
    new UpstreamStore(pool),
  );
  const cardUrl = `http://127.0.0.1:${config.UPSTREAM_EXAMPLE_PORT}/.well-known/agent-card.json`;
  const agent = `${config.DEMO_TENANT}/${UPSTREAM_EXAMPLE_AGENT}`;
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const imported = await importer.import(
          tenantIdOf(config.DEMO_TENANT),
          UPSTREAM_EXAMPLE_AGENT,
          { cardUrl },
        );
        log(
          `the example A2A server ${cardUrl} is hosted as ${agent}${imported.changed ? '' : ' (unchanged)'}`,
        );
        return;
      } catch (error) {
        if (attempt >= ATTEMPTS) {
          log(`the example A2A server was not imported as ${agent}: ${String(error)}`);
          return;
        }
        await sleep(PAUSE_MS);
      }
    }
  } finally {
    await pool.end();
  }
}
