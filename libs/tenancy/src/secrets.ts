import { createHash } from 'node:crypto';

/**
 * Hash under which API keys and worker secrets are stored. The secrets are random and high-entropy
 * (or, for the demo, set by the operator), so a fast keyed-free hash is enough to keep them out of the
 * database in clear; lookups go by hash.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
