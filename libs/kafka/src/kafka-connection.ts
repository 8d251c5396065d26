import type { KafkaClientConfig } from '@lib/config';
import type { KafkaConfig, SASLOptions } from 'kafkajs';
import { readFileSync } from 'node:fs';

/** What a kafkajs client needs to reach the brokers: where they are, TLS and SASL. */
export type KafkaConnection = Required<Pick<KafkaConfig, 'brokers' | 'ssl'>> &
  Pick<KafkaConfig, 'sasl'>;

/**
 * kafkajs's connection options from the platform's Kafka client settings (`kafkaClientSchema`), the one
 * place where they are turned into `brokers`, `ssl` and `sasl`. The CA and password files are read now, so
 * a client is built at start-up or not at all: a file that cannot be read throws, naming its variable and
 * path (never its content).
 */
export function kafkaConnection(config: KafkaClientConfig): KafkaConnection {
  const brokers = config.KAFKA_BROKERS.split(',')
    .map((broker) => broker.trim())
    .filter((broker) => broker.length > 0);
  const ca = config.KAFKA_TLS_CA_FILE;
  // A CA file only makes sense over TLS: setting it is asking for TLS.
  const ssl = ca === undefined ? config.KAFKA_TLS : { ca: caBundle(ca) };
  const sasl = saslOf(config);
  return sasl === undefined ? { brokers, ssl } : { brokers, ssl, sasl };
}

function saslOf(config: KafkaClientConfig): SASLOptions | undefined {
  const { KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: username } = config;
  const file = config.KAFKA_SASL_PASSWORD_FILE;
  const password =
    file === undefined
      ? config.KAFKA_SASL_PASSWORD
      : readSetting('KAFKA_SASL_PASSWORD_FILE', file).replace(/\r?\n$/, '');
  if (mechanism === undefined && username === undefined && password === undefined) {
    return undefined;
  }
  // kafkaClientRules refuses a partial set when the configuration is loaded; this keeps hand-made ones honest.
  if (mechanism === undefined || username === undefined || !password) {
    throw new Error(
      'invalid configuration: KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and a password ' +
        '(KAFKA_SASL_PASSWORD or a non-empty KAFKA_SASL_PASSWORD_FILE) go together, or none of them',
    );
  }
  return { mechanism, username, password };
}

function caBundle(path: string): string {
  const pem = readSetting('KAFKA_TLS_CA_FILE', path);
  // Node would take a file without a certificate as "trust nothing" and fail every connection later.
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error(`invalid configuration: KAFKA_TLS_CA_FILE: ${path} holds no PEM certificate`);
  }
  return pem;
}

function readSetting(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new Error(`invalid configuration: ${variable}: cannot read ${path} (${reason})`, {
      cause: error,
    });
  }
}
