import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { describe, expect, it } from 'vitest';
import { isRetryable } from './upstream-errors';

describe('isRetryable', () => {
  it('retries what a later try may change', () => {
    expect(isRetryable(new TypeError('fetch failed'))).toBe(true);
    expect(
      isRetryable(Object.assign(new Error('14 UNAVAILABLE: No connection'), { code: 14 })),
    ).toBe(true);
    expect(
      isRetryable(new Error('HTTP error for SendMessage! Status: 503 Service Unavailable.')),
    ).toBe(true);
    expect(isRetryable(new Error('HTTP error for /tasks/x! Status: 429 Too Many Requests.'))).toBe(
      true,
    );
    expect(isRetryable(new Error('terminated'))).toBe(true);
  });

  it('stops at what the upstream refused', () => {
    expect(isRetryable(new TaskNotFoundError('no task'))).toBe(false);
    expect(isRetryable(new Error('HTTP error for SendMessage! Status: 401 Unauthorized.'))).toBe(
      false,
    );
    expect(
      isRetryable(
        new Error('HTTP error establishing stream for SendStreamingMessage: 403 Forbidden.'),
      ),
    ).toBe(false);
    expect(isRetryable(Object.assign(new Error('16 UNAUTHENTICATED'), { code: 16 }))).toBe(false);
    expect(isRetryable(new SyntaxError('Unexpected end of JSON input'))).toBe(false);
    expect(
      isRetryable(new Error('HTTP error for SendMessage! Status: 307 Temporary Redirect.')),
    ).toBe(false);
  });
});
