import { loadConfig, localPostgresSchema } from '@lib/config';
import { describe, expect, it } from 'vitest';
import {
  defaultPostgresAddress,
  defaultPostgresUrl,
  describeChoice,
  kafkaAddresses,
  planStandalone,
  redacted,
  redisAddresses,
} from './local-servers';

const ASKED = {
  START_RELAY: true,
  START_PUSH_DISPATCHER: true,
  KAFKA_BROKERS: '127.0.0.1:9092',
  REDIS_URL: 'redis://127.0.0.1:6379',
};

describe('planStandalone', () => {
  it('runs everything and offers everything when Kafka and Redis answer (as today)', () => {
    expect(planStandalone(ASKED, { kafka: true, redis: true })).toStrictEqual({
      relay: true,
      pushDispatcher: true,
      features: { pushNotifications: true, requestRateQuotas: true },
      notices: [],
    });
  });

  it('without Kafka: no relay, no dispatcher, no push notifications, one line saying so', () => {
    expect(planStandalone(ASKED, { kafka: false, redis: true })).toStrictEqual({
      relay: false,
      pushDispatcher: false,
      features: { pushNotifications: false, requestRateQuotas: true },
      notices: [
        'Kafka not reachable at 127.0.0.1:9092: the Kafka feed and push notifications are off',
      ],
    });
  });

  it('without Redis: the relay runs; no dispatcher, no push notifications, no rate quotas', () => {
    expect(planStandalone(ASKED, { kafka: true, redis: false })).toStrictEqual({
      relay: true,
      pushDispatcher: false,
      features: { pushNotifications: false, requestRateQuotas: false },
      notices: [
        'Redis not reachable at redis://127.0.0.1:6379: push notifications and per-tenant ' +
          'request-rate quotas are off',
      ],
    });
  });

  it('on a bare laptop: one line per absent server', () => {
    const plan = planStandalone(ASKED, { kafka: false, redis: false });
    expect(plan.features).toStrictEqual({ pushNotifications: false, requestRateQuotas: false });
    expect(plan.notices).toHaveLength(2);
  });

  it('START_PUSH_DISPATCHER=false leaves delivery to a dispatcher elsewhere: push stays offered', () => {
    const plan = planStandalone(
      { ...ASKED, START_PUSH_DISPATCHER: false },
      { kafka: false, redis: false },
    );
    expect(plan).toStrictEqual({
      relay: false,
      pushDispatcher: false,
      features: { pushNotifications: true, requestRateQuotas: false },
      notices: [
        'Kafka not reachable at 127.0.0.1:9092: the Kafka feed is off',
        'Redis not reachable at redis://127.0.0.1:6379: per-tenant request-rate quotas are off',
      ],
    });
  });

  it('says nothing about Kafka when nothing in the process needs it', () => {
    const plan = planStandalone(
      { ...ASKED, START_RELAY: false, START_PUSH_DISPATCHER: false },
      { kafka: false, redis: true },
    );
    expect(plan.notices).toStrictEqual([]);
    expect(plan.features.pushNotifications).toBe(true);
  });

  it('never logs the password of REDIS_URL', () => {
    const plan = planStandalone(
      { ...ASKED, REDIS_URL: 'redis://:s3cret@cache:6379/0' },
      { kafka: true, redis: false },
    );
    expect(plan.notices[0]).toContain('redis://:***@cache:6379/0');
    expect(plan.notices[0]).not.toContain('s3cret');
  });
});

describe('the default local Postgres (libpq: PGHOST, PGPORT)', () => {
  it('is 127.0.0.1:5432 with the database a2a as user postgres, like POSTGRES_URL’s default', () => {
    const config = loadConfig(localPostgresSchema, {});
    expect(defaultPostgresAddress(config)).toStrictEqual({ host: '127.0.0.1', port: 5432 });
    expect(defaultPostgresUrl(config)).toBe('postgres://postgres@127.0.0.1:5432/a2a');
  });

  it('follows PGHOST and PGPORT, IPv6 included', () => {
    const config = loadConfig(localPostgresSchema, { PGHOST: '::1', PGPORT: '5433' });
    expect(defaultPostgresAddress(config)).toStrictEqual({ host: '::1', port: 5433 });
    expect(defaultPostgresUrl(config)).toBe('postgres://postgres@[::1]:5433/a2a');
  });

  it('reaches a PGHOST directory through its Unix socket', () => {
    const config = loadConfig(localPostgresSchema, { PGHOST: '/var/run/postgresql' });
    expect(defaultPostgresAddress(config)).toStrictEqual({
      path: '/var/run/postgresql/.s.PGSQL.5432',
    });
    const url = new URL(defaultPostgresUrl(config));
    expect(url.searchParams.get('host')).toBe('/var/run/postgresql');
    expect(url.pathname).toBe('/a2a');
  });

  it('has embedded defaults: the project’s .data/postgres on 127.0.0.1:54329', () => {
    expect(loadConfig(localPostgresSchema, {})).toStrictEqual({
      PGHOST: '127.0.0.1',
      PGPORT: 5432,
      EMBEDDED_POSTGRES_DIR: '.data/postgres',
      EMBEDDED_POSTGRES_PORT: 54329,
    });
  });
});

describe('describeChoice', () => {
  const config = loadConfig(localPostgresSchema, { PGPORT: '5999' });

  it('names POSTGRES_URL, without its password', () => {
    expect(
      describeChoice({ kind: 'configured', url: 'postgres://app:pw@db:5432/a2a' }, config),
    ).toBe('Postgres: postgres://app:***@db:5432/a2a (POSTGRES_URL)');
  });

  it('says why the local server or the embedded one was chosen', () => {
    const address = defaultPostgresAddress(config);
    expect(
      describeChoice({ kind: 'local', url: defaultPostgresUrl(config), address }, config),
    ).toBe(
      'Postgres: postgres://postgres@127.0.0.1:5999/a2a: POSTGRES_URL is unset and a server answers ' +
        'at 127.0.0.1:5999 (PGHOST/PGPORT)',
    );
    expect(describeChoice({ kind: 'embedded', address }, config)).toBe(
      'Postgres: the embedded one on 127.0.0.1:54329: POSTGRES_URL is unset and no server answers ' +
        'at 127.0.0.1:5999 (PGHOST/PGPORT)',
    );
  });
});

describe('server addresses', () => {
  it('reads every broker of KAFKA_BROKERS and leaves malformed ones out', () => {
    expect(kafkaAddresses('k1:9092, k2:19092,[::1]:9093,nonsense,:1')).toStrictEqual([
      { host: 'k1', port: 9092 },
      { host: 'k2', port: 19092 },
      { host: '::1', port: 9093 },
    ]);
  });

  it('reads the server of REDIS_URL, 6379 by default', () => {
    expect(redisAddresses('redis://cache:6380/2')).toStrictEqual([{ host: 'cache', port: 6380 }]);
    expect(redisAddresses('rediss://user:pw@[::1]')).toStrictEqual([{ host: '::1', port: 6379 }]);
    expect(redisAddresses('http://cache:6379')).toStrictEqual([]);
    expect(redisAddresses('not a url')).toStrictEqual([]);
  });

  it('redacts only passwords', () => {
    expect(redacted('postgres://postgres@127.0.0.1:5432/a2a')).toBe(
      'postgres://postgres@127.0.0.1:5432/a2a',
    );
    expect(redacted('redis://:pw@h:1')).toBe('redis://:***@h:1');
  });
});
