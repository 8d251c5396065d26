import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals secrets at rest with AES-256-GCM (UPSTREAM_SECRETS_KEY). Each sealed value is bound to what it belongs
 * to (`context`, e.g. `demo/weather:headers`): a value copied to another row does not open there.
 * Layout: version byte, 12-byte IV, 16-byte tag, ciphertext.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** The box of a 32-byte key given in base64; throws on any other length. */
  static fromBase64(text: string): SecretBox {
    const key = Buffer.from(text, 'base64');
    if (key.length !== 32) {
      throw new Error('the secrets key must be 32 bytes in base64');
    }
    return new SecretBox(key);
  }

  seal(plain: string, context: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  /** The plain text; throws when the value was sealed with another key, for another context, or altered. */
  open(sealed: Buffer, context: string): string {
    if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION) {
      throw new Error('not a sealed value of this version');
    }
    const iv = sealed.subarray(1, 1 + IV_BYTES);
    const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    const body = sealed.subarray(1 + IV_BYTES + TAG_BYTES);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  }
}
