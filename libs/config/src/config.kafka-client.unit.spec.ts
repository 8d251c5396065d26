import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaClientRules, kafkaClientSchema, loadConfig, platformSchema } from './config';

const kafkaClient = kafkaClientSchema.superRefine(kafkaClientRules);
const dir = mkdtempSync(join(tmpdir(), 'kafka-client-config-'));
/** A file that exists: the file variables are read when the configuration is loaded. */
const secretFile = join(dir, 'password');
writeFileSync(secretFile, 's3cret');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kafkaClientSchema', () => {
  it('is plaintext without SASL by default', () => {
    expect(loadConfig(kafkaClient, {})).toStrictEqual({
      KAFKA_BROKERS: '127.0.0.1:9092',
      KAFKA_TLS: false,
    });
  });

  it("takes a mechanism, a user name and a password together, in kafkajs's or Kafka's spelling", () => {
    const env = { KAFKA_SASL_USERNAME: 'relay', KAFKA_SASL_PASSWORD: 's3cret' };
    expect(
      loadConfig(kafkaClient, { ...env, KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512' }),
    ).toMatchObject({ ...env, KAFKA_SASL_MECHANISM: 'scram-sha-512' });
    expect(loadConfig(kafkaClient, { ...env, KAFKA_SASL_MECHANISM: 'plain' })).toMatchObject({
      KAFKA_SASL_MECHANISM: 'plain',
    });
  });

  it('takes the password from a file instead (a mounted Secret)', () => {
    const env = {
      KAFKA_SASL_MECHANISM: 'scram-sha-256',
      KAFKA_SASL_USERNAME: 'relay',
      KAFKA_SASL_PASSWORD_FILE: secretFile,
    };
    expect(loadConfig(kafkaClient, env)).toMatchObject(env);
  });

  it.each([
    [
      { KAFKA_SASL_MECHANISM: 'scram-sha-512' },
      [
        'KAFKA_SASL_USERNAME: required with KAFKA_SASL_MECHANISM (',
        'KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE: required with KAFKA_SASL_MECHANISM (',
      ],
    ],
    [
      { KAFKA_SASL_USERNAME: 'relay', KAFKA_SASL_PASSWORD_FILE: secretFile },
      ['KAFKA_SASL_MECHANISM: required with KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD_FILE ('],
    ],
    [
      { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_PASSWORD: 's3cret' },
      ['KAFKA_SASL_USERNAME: required with KAFKA_SASL_MECHANISM and KAFKA_SASL_PASSWORD ('],
    ],
  ])('refuses a partial SASL set %j, naming what is missing', (env, problems) => {
    const error = captured(() => loadConfig(kafkaClient, env));
    for (const problem of problems) {
      expect(error).toContain(problem);
    }
    expect(error).not.toContain('s3cret');
  });

  it('refuses a password both inline and in a file, without echoing it', () => {
    const error = captured(() =>
      loadConfig(kafkaClient, {
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'relay',
        KAFKA_SASL_PASSWORD: 's3cret',
        KAFKA_SASL_PASSWORD_FILE: secretFile,
      }),
    );
    expect(error).toContain(
      'KAFKA_SASL_PASSWORD_FILE: set KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE, not both',
    );
    expect(error).not.toContain('s3cret');
  });

  it('refuses a mechanism kafkajs does not offer, and an empty user name or password', () => {
    expect(() => loadConfig(kafkaClient, { KAFKA_SASL_MECHANISM: 'gssapi' })).toThrow(
      /KAFKA_SASL_MECHANISM: Invalid enum value/,
    );
    expect(() => loadConfig(kafkaClient, { KAFKA_SASL_USERNAME: '' })).toThrow(
      /KAFKA_SASL_USERNAME/,
    );
    expect(() => loadConfig(kafkaClient, { KAFKA_SASL_PASSWORD: '' })).toThrow(
      /KAFKA_SASL_PASSWORD/,
    );
  });

  it('refuses a CA file or a password file it cannot read, or an empty one, naming the path', () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '');
    expect(() => loadConfig(kafkaClient, { KAFKA_TLS_CA_FILE: empty })).toThrow(
      `KAFKA_TLS_CA_FILE: ${empty} is empty`,
    );
    expect(captured(() => loadConfig(kafkaClient, { KAFKA_TLS_CA_FILE: '' }))).toBe(
      'Error: invalid configuration: KAFKA_TLS_CA_FILE: String must contain at least 1 character(s)',
    );
    const missing = join(dir, 'absent');
    expect(() => loadConfig(kafkaClient, { KAFKA_TLS_CA_FILE: missing })).toThrow(
      `KAFKA_TLS_CA_FILE: cannot read ${missing} (ENOENT)`,
    );
    expect(() => loadConfig(kafkaClient, { KAFKA_SASL_PASSWORD_FILE: dir })).toThrow(
      `KAFKA_SASL_PASSWORD_FILE: cannot read ${dir} (EISDIR)`,
    );
  });

  it('keeps a CA file and KAFKA_TLS as given (the CA file implies TLS where the client is built)', () => {
    expect(loadConfig(kafkaClient, { KAFKA_TLS_CA_FILE: secretFile })).toMatchObject({
      KAFKA_TLS: false,
      KAFKA_TLS_CA_FILE: secretFile,
    });
    expect(loadConfig(kafkaClient, { KAFKA_TLS: 'true' })).toMatchObject({ KAFKA_TLS: true });
  });

  it("is part of the standalone process's configuration, rules included", () => {
    expect(loadConfig(platformSchema, { KAFKA_TLS: '1' })).toMatchObject({ KAFKA_TLS: true });
    expect(() => loadConfig(platformSchema, { KAFKA_SASL_USERNAME: 'relay' })).toThrow(
      'KAFKA_SASL_MECHANISM: required with KAFKA_SASL_USERNAME',
    );
  });
});

function captured(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return String(error);
  }
  throw new Error('expected an error');
}
