import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { bootStandalone, type Standalone } from '../../e2e/support/platform';

/** The whole platform (`npm start`) with the console at `consoleUrl` and a platform-admin bootstrap token. */
export interface ConsolePlatform extends Standalone {
  consoleUrl: string;
  adminToken: string;
  /** One admin API call (`path` under `/admin/v1`) with the bootstrap token; a refusal fails the test. */
  admin<T>(method: string, path: string, body?: unknown): Promise<T>;
}

export async function bootConsolePlatform(
  prefix: string,
  env: Record<string, string> = {},
): Promise<ConsolePlatform> {
  const adminToken = randomBytes(24).toString('base64url');
  const platform = await bootStandalone(prefix, { ...env, ADMIN_BOOTSTRAP_TOKEN: adminToken });
  return {
    ...platform,
    consoleUrl: `${platform.baseUrl}/console/`,
    adminToken,
    async admin<T>(method: string, path: string, body?: unknown): Promise<T> {
      const response = await fetch(`${platform.baseUrl}/admin/v1${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${adminToken}`,
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      expect(response.ok, `${method} ${path}: ${response.status}`).toBe(true);
      return (await response.json()) as T;
    },
  };
}
