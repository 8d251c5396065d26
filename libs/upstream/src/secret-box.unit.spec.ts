import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box';

const key = () => randomBytes(32).toString('base64');

describe('SecretBox', () => {
  it('opens what it sealed, and never holds the plain text', () => {
    const box = SecretBox.fromBase64(key());
    const sealed = box.seal('Bearer s3cret', 'demo/x:headers');
    expect(sealed.toString('latin1')).not.toContain('s3cret');
    expect(box.open(sealed, 'demo/x:headers')).toBe('Bearer s3cret');
  });

  it('refuses another context, another key and an altered value', () => {
    const box = SecretBox.fromBase64(key());
    const sealed = box.seal('value', 'demo/x:headers');
    expect(() => box.open(sealed, 'demo/y:headers')).toThrow();
    expect(() => SecretBox.fromBase64(key()).open(sealed, 'demo/x:headers')).toThrow();
    const altered = Buffer.from(sealed);
    altered[altered.length - 1] = (altered[altered.length - 1] ?? 0) ^ 1;
    expect(() => box.open(altered, 'demo/x:headers')).toThrow();
    expect(() => box.open(Buffer.from([2, 0, 0]), 'demo/x:headers')).toThrow(/version/);
  });

  it('takes only a 32-byte key', () => {
    expect(() => SecretBox.fromBase64(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
  });
});
