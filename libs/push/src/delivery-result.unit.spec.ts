import { describe, expect, it } from 'vitest';
import { parseRetryAfter, statusVerdict } from './delivery-result';

const NOW = Date.parse('2026-12-02T10:00:00Z');
const CAP = 300_000;

describe('statusVerdict', () => {
  it.each([
    [200, 'delivered'],
    [201, 'delivered'],
    [202, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [408, 'retry'],
    [425, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [504, 'retry'],
    [599, 'retry'],
    [301, 'rejected'],
    [302, 'rejected'],
    [307, 'rejected'],
    [308, 'rejected'],
    [400, 'rejected'],
    [401, 'rejected'],
    [403, 'rejected'],
    [404, 'rejected'],
    [410, 'rejected'],
    [413, 'rejected'],
    [422, 'rejected'],
    [600, 'rejected'],
  ] as const)('HTTP %i is %s', (status, outcome) => {
    expect(statusVerdict(status, undefined, NOW, CAP)).toMatchObject({ outcome, status });
  });

  it('says why a redirect is a failure', () => {
    expect(statusVerdict(302, undefined, NOW, CAP)).toStrictEqual({
      outcome: 'rejected',
      status: 302,
      error: 'HTTP 302: redirects are not followed',
    });
  });

  it('carries Retry-After on retryable statuses only', () => {
    expect(statusVerdict(503, '120', NOW, CAP)).toStrictEqual({
      outcome: 'retry',
      status: 503,
      retryAfterMs: 120_000,
      error: 'HTTP 503',
    });
    expect(statusVerdict(429, '7', NOW, CAP)).toMatchObject({ retryAfterMs: 7_000 });
    expect(statusVerdict(500, undefined, NOW, CAP)).not.toHaveProperty('retryAfterMs');
    expect(statusVerdict(404, '120', NOW, CAP)).not.toHaveProperty('retryAfterMs');
  });
});

describe('parseRetryAfter (RFC 9110 §10.2.3)', () => {
  it.each([
    ['0', 0],
    ['5', 5_000],
    [' 30 ', 30_000],
    ['86400', CAP],
    ['Wed, 02 Dec 2026 10:00:42 GMT', 42_000],
    ['Wed, 02 Dec 2026 09:00:00 GMT', 0],
    ['Thu, 03 Dec 2026 10:00:00 GMT', CAP],
    [undefined, undefined],
    ['', undefined],
    ['soon', undefined],
    ['-5', undefined],
    ['1.5', undefined],
    ['2026-12-02T10:01:00Z', undefined],
    ['Wed, 32 Dec 2026 10:00:00 GMT', undefined],
  ])('%j → %j', (value, expected) => {
    expect(parseRetryAfter(value, NOW, CAP)).toBe(expected);
  });
});
