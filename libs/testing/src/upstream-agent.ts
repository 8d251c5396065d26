import { freePort, PlatformProcess } from './platform-processes';

/** The example A2A server (`examples/upstream-agent`), started as its own process. */
export interface UpstreamAgentProcess {
  readonly process: PlatformProcess;
  /** Its agent card's URL. */
  readonly cardUrl: string;
  readonly httpPort: number;
  readonly grpcPort: number;
}

/**
 * Starts the example upstream agent (the official a2a-js SDK server, no part of the platform) on free ports,
 * with `env` (UPSTREAM_BEARER_TOKEN, UPSTREAM_STREAMING, UPSTREAM_NAME, …). Ports given in `env` win, so it
 * can be restarted where it was.
 */
export async function startUpstreamAgent(
  env: Record<string, string> = {},
): Promise<UpstreamAgentProcess> {
  const httpPort = Number(env['UPSTREAM_HTTP_PORT'] ?? (await freePort()));
  const grpcPort = Number(env['UPSTREAM_GRPC_PORT'] ?? (await freePort()));
  const proc = new PlatformProcess(
    'upstream-agent',
    // Relative to dist/: the example is plain JavaScript, run from its own folder.
    '../examples/upstream-agent/server.mjs',
    [],
    { ...env, UPSTREAM_HTTP_PORT: String(httpPort), UPSTREAM_GRPC_PORT: String(grpcPort) },
  ).start();
  await proc.waitForOutput(/upstream agent ready/);
  return {
    process: proc,
    cardUrl: `http://127.0.0.1:${httpPort}/.well-known/agent-card.json`,
    httpPort,
    grpcPort,
  };
}

/** A bridge process (`apps/bridge`) with `env` (POSTGRES_URL, WORKER_TARGET, UPSTREAM_SECRETS_KEY, …). */
export async function startBridge(env: Record<string, string>): Promise<PlatformProcess> {
  const proc = new PlatformProcess('bridge', 'apps/bridge/src/main.js', [], {
    BRIDGE_POLL_MS: '200',
    ...env,
  }).start();
  await proc.waitForOutput(/bridge ready/);
  return proc;
}
