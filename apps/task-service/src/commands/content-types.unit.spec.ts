import { A2aError, type Message } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import { acceptsMediaType, assertAcceptedParts } from './content-types';

const message = (...mediaTypes: (string | undefined)[]): Message => ({
  messageId: 'm',
  role: 'ROLE_USER',
  parts: mediaTypes.map((mediaType) => ({ text: 'x', ...(mediaType ? { mediaType } : {}) })),
});

describe('input modes', () => {
  it.each([
    [['text/plain'], 'text/plain', true],
    [['text/plain'], 'TEXT/Plain; charset=utf-8', true],
    [['text/plain'], 'image/png', false],
    [['image/*'], 'image/png', true],
    [['image/*'], 'imagex/png', false],
    [['*/*'], 'application/pdf', true],
  ] as const)('modes %j accept %s: %s', (modes, mediaType, expected) => {
    expect(acceptsMediaType(modes, mediaType)).toBe(expected);
  });

  it('rejects a part with an undeclared media type as CONTENT_TYPE_NOT_SUPPORTED (§9.1)', () => {
    const thrown = (() => {
      try {
        assertAcceptedParts(message('text/plain', 'image/png'), ['text/plain']);
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(thrown).toBeInstanceOf(A2aError);
    expect((thrown as A2aError).reason).toBe('CONTENT_TYPE_NOT_SUPPORTED');
    expect((thrown as A2aError).message).toContain('parts[1]');
  });

  it('leaves parts without a media type, and agents without modes, alone', () => {
    expect(() => assertAcceptedParts(message(undefined), ['text/plain'])).not.toThrow();
    expect(() => assertAcceptedParts(message('image/png'), [])).not.toThrow();
  });
});
