import { describe, expect, it } from 'vitest';
import { JWT_REJECTION_REASONS, JwtRejected } from './jwt.errors';

describe('JwtRejected', () => {
  it('has a client-safe message per reason, naming at most the missing claim', () => {
    for (const reason of JWT_REJECTION_REASONS) {
      const rejected = new JwtRejected(reason, { issuer: 'https://idp.example' });
      expect(rejected.message).toMatch(/^the .*bearer token|^the token issuer/);
      expect(rejected.message).not.toContain('idp.example');
    }
    expect(new JwtRejected('missing-claim', { claim: 'sub' }).message).toBe(
      'the bearer token lacks a required claim ("sub")',
    );
  });

  it('only an unreachable key set is worth retrying with the same token', () => {
    const retryable = JWT_REJECTION_REASONS.filter((reason) => new JwtRejected(reason).retryable);
    expect(retryable).toStrictEqual(['jwks-unavailable']);
  });

  it('keeps the cause only when given one', () => {
    expect(new JwtRejected('expired')).not.toHaveProperty('cause');
    const cause = new Error('connect ECONNREFUSED');
    expect(new JwtRejected('jwks-unavailable', { cause }).cause).toBe(cause);
  });
});
