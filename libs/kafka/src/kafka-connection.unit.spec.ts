import type { KafkaClientConfig } from '@lib/config';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaConnection } from './kafka-connection';

const dir = mkdtempSync(join(tmpdir(), 'kafka-connection-'));
const PEM = '-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n';

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** Settings as given, without the checks of loading them: the mapping reads the files again, later. */
const settings = (values: Partial<KafkaClientConfig>): KafkaClientConfig => ({
  KAFKA_BROKERS: '127.0.0.1:9092',
  KAFKA_TLS: false,
  ...values,
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kafkaConnection', () => {
  it('is plaintext without SASL by default, on every listed broker', () => {
    expect(kafkaConnection(settings({ KAFKA_BROKERS: ' a:9092, b:9092 ,' }))).toStrictEqual({
      brokers: ['a:9092', 'b:9092'],
      ssl: false,
    });
  });

  it("speaks TLS checked against Node's CAs with KAFKA_TLS", () => {
    expect(kafkaConnection(settings({ KAFKA_TLS: true })).ssl).toBe(true);
  });

  it('trusts the CA file, which implies TLS', () => {
    const ca = file('ca.crt', PEM);
    expect(kafkaConnection(settings({ KAFKA_TLS_CA_FILE: ca })).ssl).toStrictEqual({ ca: PEM });
    expect(kafkaConnection(settings({ KAFKA_TLS: true, KAFKA_TLS_CA_FILE: ca })).ssl).toStrictEqual(
      { ca: PEM },
    );
  });

  it('refuses a CA file it cannot read, or one without a certificate, naming the variable', () => {
    const missing = join(dir, 'absent.crt');
    expect(() => kafkaConnection(settings({ KAFKA_TLS_CA_FILE: missing }))).toThrow(
      `invalid configuration: KAFKA_TLS_CA_FILE: cannot read ${missing} (ENOENT)`,
    );
    const empty = file('empty.crt', '');
    expect(() => kafkaConnection(settings({ KAFKA_TLS_CA_FILE: empty }))).toThrow(
      `invalid configuration: KAFKA_TLS_CA_FILE: ${empty} holds no PEM certificate`,
    );
  });

  it('gives kafkajs the SASL mechanism, user name and inline password', () => {
    const connection = kafkaConnection(
      settings({
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'relay',
        KAFKA_SASL_PASSWORD: 's3cret',
      }),
    );
    expect(connection.sasl).toStrictEqual({
      mechanism: 'scram-sha-512',
      username: 'relay',
      password: 's3cret',
    });
  });

  it('reads the password file without its trailing line break', () => {
    const connection = kafkaConnection(
      settings({
        KAFKA_SASL_MECHANISM: 'plain',
        KAFKA_SASL_USERNAME: 'relay',
        KAFKA_SASL_PASSWORD_FILE: file('password', 's3cret \n'),
      }),
    );
    expect(connection.sasl).toStrictEqual({
      mechanism: 'plain',
      username: 'relay',
      password: 's3cret ',
    });
  });

  it('refuses a password file it cannot read, or an empty one', () => {
    const sasl = { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'relay' } as const;
    const missing = join(dir, 'absent-password');
    expect(() => kafkaConnection(settings({ ...sasl, KAFKA_SASL_PASSWORD_FILE: missing }))).toThrow(
      `invalid configuration: KAFKA_SASL_PASSWORD_FILE: cannot read ${missing} (ENOENT)`,
    );
    expect(() =>
      kafkaConnection(settings({ ...sasl, KAFKA_SASL_PASSWORD_FILE: file('blank', '\n') })),
    ).toThrow(/KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and a password .* go together/);
  });

  it('refuses a partial SASL set that did not go through kafkaClientRules', () => {
    expect(() => kafkaConnection(settings({ KAFKA_SASL_USERNAME: 'relay' }))).toThrow(
      /go together, or none of them/,
    );
  });
});
