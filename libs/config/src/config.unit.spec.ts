import { describe, expect, it } from 'vitest';
import { loadConfig, pushDispatcherSchema } from './config';

describe('pushDispatcherSchema', () => {
  it('has documented defaults for delivery attempts, timeouts, limits and the allowlist', () => {
    expect(loadConfig(pushDispatcherSchema, {})).toMatchObject({
      PUSH_MAX_ATTEMPTS: 8,
      PUSH_BACKOFF_BASE_MS: 1_000,
      PUSH_BACKOFF_CAP_MS: 300_000,
      PUSH_CONNECT_TIMEOUT_MS: 5_000,
      PUSH_RESPONSE_TIMEOUT_MS: 10_000,
      PUSH_BODY_TIMEOUT_MS: 5_000,
      PUSH_HOST_CONCURRENCY: 16,
      PUSH_RESPONSE_BODY_LIMIT_BYTES: 65_536,
      PUSH_ALLOWLIST: {},
      PUSH_CLAIM_TIMEOUT_MS: 60_000,
    });
  });

  it('reads PUSH_ALLOWLIST as tenant → host names, addresses and CIDRs', () => {
    const allowlist = {
      acme: ['hooks.internal.acme', 'localhost', '10.20.0.0/16', '127.0.0.1', 'fd00::/8', '::1'],
      globex: [],
    };
    const config = loadConfig(pushDispatcherSchema, { PUSH_ALLOWLIST: JSON.stringify(allowlist) });
    expect(config.PUSH_ALLOWLIST).toStrictEqual(allowlist);
  });

  it.each([
    ['not JSON', 'PUSH_ALLOWLIST: must be a JSON object'],
    ['["10.0.0.0/8"]', 'PUSH_ALLOWLIST: Expected object'],
    ['{"acme":"10.0.0.0/8"}', 'PUSH_ALLOWLIST.acme: Expected array'],
    ['{"acme":["10.0.0.0/33"]}', 'PUSH_ALLOWLIST.acme.0: must be a host name'],
    ['{"acme":["::/129"]}', 'PUSH_ALLOWLIST.acme.0: must be a host name'],
    ['{"acme":["hooks/8"]}', 'PUSH_ALLOWLIST.acme.0: must be a host name'],
    ['{"acme":["http://hooks.acme"]}', 'PUSH_ALLOWLIST.acme.0: must be a host name'],
    ['{"acme":["hooks acme"]}', 'PUSH_ALLOWLIST.acme.0: must be a host name'],
  ])('refuses PUSH_ALLOWLIST=%s', (value, problem) => {
    expect(() => loadConfig(pushDispatcherSchema, { PUSH_ALLOWLIST: value })).toThrow(problem);
  });

  it('refuses a zero or negative timeout or limit', () => {
    expect(() => loadConfig(pushDispatcherSchema, { PUSH_HOST_CONCURRENCY: '0' })).toThrow(
      /PUSH_HOST_CONCURRENCY/,
    );
    expect(() => loadConfig(pushDispatcherSchema, { PUSH_CONNECT_TIMEOUT_MS: '-1' })).toThrow(
      /PUSH_CONNECT_TIMEOUT_MS/,
    );
  });
});
