import { randomBytes } from 'node:crypto';
import { bootStandalone, type Standalone } from '../../e2e/support/platform';

/** The whole platform (`npm start`) with the console at `consoleUrl` and a platform-admin bootstrap token. */
export interface ConsolePlatform extends Standalone {
  consoleUrl: string;
  adminToken: string;
}

export async function bootConsolePlatform(
  prefix: string,
  env: Record<string, string> = {},
): Promise<ConsolePlatform> {
  const adminToken = randomBytes(24).toString('base64url');
  const platform = await bootStandalone(prefix, { ...env, ADMIN_BOOTSTRAP_TOKEN: adminToken });
  return { ...platform, consoleUrl: `${platform.baseUrl}/console/`, adminToken };
}
