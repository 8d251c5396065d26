import { Logger as NestLogger } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { addToLogContext, withLogContext } from './log-context';
import { createLogger, fieldLogger, installLogger, type LoggingOptions } from './logging';
import { NestLoggerAdapter } from './nest-logging';
import { scrubSecrets } from './redaction';

/** A logger writing into an array of lines. */
function capture(options: Partial<LoggingOptions> = {}): {
  lines: string[];
  entries: () => Record<string, unknown>[];
} {
  const lines: string[] = [];
  const destination: DestinationStream = { write: (line: string) => lines.push(line) };
  const logger = createLogger({
    app: 'test-app',
    level: 'debug',
    format: 'json',
    destination,
    ...options,
  });
  installLogger(logger);
  NestLoggerAdapter.install(logger);
  return {
    lines,
    entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

afterEach(() => {
  // Nest's default console logger again, for the other suites of the run.
  NestLogger.overrideLogger(new NestLogger());
});

describe('log lines', () => {
  it('are JSON objects with the level name, an ISO time, the app and the component', () => {
    const { entries } = capture();
    new NestLogger('Dispatcher').warn('dispatch paused');
    const [entry] = entries();
    expect(entry).toMatchObject({
      level: 'warn',
      app: 'test-app',
      component: 'Dispatcher',
      msg: 'dispatch paused',
    });
    expect(new Date(entry?.['time'] as string).toISOString()).toBe(entry?.['time']);
  });

  it('name the call they were written for: request id, tenant, agent and task', () => {
    const { entries } = capture();
    withLogContext({ requestId: 'req-1' }, () => {
      addToLogContext({ tenant: 'acme', agent: 'echo' });
      addToLogContext({ taskId: 'task-9' });
      new NestLogger('Gateway').log('inside');
    });
    new NestLogger('Gateway').log('outside');
    const [inside, outside] = entries();
    expect(inside).toMatchObject({
      requestId: 'req-1',
      tenant: 'acme',
      agent: 'echo',
      taskId: 'task-9',
    });
    expect(outside).not.toHaveProperty('requestId');
    expect(outside).not.toHaveProperty('tenant');
  });

  it('keep a nested call context apart from its caller', () => {
    const { entries } = capture();
    withLogContext({ requestId: 'outer' }, () => {
      withLogContext({ tenant: 'inner-tenant' }, () => {
        addToLogContext({ taskId: 'only-inner' });
        new NestLogger('X').log('inner');
      });
      new NestLogger('X').log('outer');
    });
    const [inner, outer] = entries();
    expect(inner).toMatchObject({
      requestId: 'outer',
      tenant: 'inner-tenant',
      taskId: 'only-inner',
    });
    expect(outer).toMatchObject({ requestId: 'outer' });
    expect(outer).not.toHaveProperty('taskId');
  });

  it('carry an error with its class, message and stack', () => {
    const { entries } = capture();
    const error = new Error('it broke', { cause: new TypeError('underneath') });
    new NestLogger('Writer').error(error);
    new NestLogger('Writer').error('operation failed', 'Error: x\n    at f (a.js:1:1)');
    const [thrown, stacked] = entries();
    expect(thrown).toMatchObject({
      level: 'error',
      msg: 'it broke',
      err: { type: 'Error', message: 'it broke', cause: { type: 'TypeError' } },
    });
    expect((thrown?.['err'] as { stack: string }).stack).toContain('logging.unit.spec');
    expect(stacked).toMatchObject({
      msg: 'operation failed',
      err: { stack: 'Error: x\n    at f (a.js:1:1)' },
    });
  });

  it('map Nest levels to pino levels and drop those below LOG_LEVEL', () => {
    const { entries } = capture({ level: 'info' });
    const logger = new NestLogger('L');
    logger.verbose('v');
    logger.debug('d');
    logger.log('l');
    logger.fatal('f');
    expect(entries().map((e) => [e['level'], e['msg']])).toStrictEqual([
      ['info', 'l'],
      ['fatal', 'f'],
    ]);
  });

  it('take (message, fields) from field loggers such as the worker SDK', () => {
    const { entries } = capture();
    fieldLogger('AgentWorker').info('connected', { workerId: 'w-1' });
    expect(entries()[0]).toMatchObject({
      component: 'AgentWorker',
      msg: 'connected',
      workerId: 'w-1',
    });
  });

  it('are one readable line each with LOG_FORMAT=pretty', () => {
    const { lines } = capture({ format: 'pretty' });
    withLogContext({ requestId: 'req-2' }, () => new NestLogger('Relay').warn('relay interrupted'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: test-app \[Relay\] relay interrupted /,
    );
    expect(lines[0]).toContain('"requestId":"req-2"');
    expect(() => JSON.parse(lines[0] ?? '') as unknown).toThrow();
  });
});

describe('secrets in log lines', () => {
  const secrets = {
    apiKey: 'a2a_key-0123abcd_Q2hlY2tUaGlzSXNBUmVhbGx5TG9uZ1NlY3JldA',
    bearer: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl',
    password: 'pg-pass-42',
    worker: 'a2aw_cred-77_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0',
    token: 'webhook-token-123',
  };

  it('are removed from fields that hold secrets, anywhere in the object', () => {
    const { lines } = capture();
    new NestLogger('Http').log({
      headers: { authorization: `Bearer ${secrets.bearer}`, 'x-api-key': secrets.apiKey },
      req: { headers: { authorization: `Bearer ${secrets.bearer}` } },
      config: { token: secrets.token, credentials: secrets.password },
      WORKER_SECRET: secrets.worker,
      POSTGRES_URL: `postgres://postgres:${secrets.password}@db:5432/a2a`,
    });
    const text = lines.join('');
    for (const secret of Object.values(secrets)) {
      expect(text).not.toContain(secret);
    }
    const [entry] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entry).toMatchObject({
      headers: { authorization: '[redacted]', 'x-api-key': '[redacted]' },
      POSTGRES_URL: 'postgres://postgres:[redacted]@db:5432/a2a',
    });
  });

  it('are scrubbed from messages and errors they were interpolated into', () => {
    const { lines } = capture();
    const logger = new NestLogger('Leaky');
    logger.warn(`connecting to postgres://postgres:${secrets.password}@db/a2a failed`);
    logger.log(`sent Authorization: Bearer ${secrets.bearer} with x-api-key=${secrets.apiKey}`);
    logger.error(new Error(`worker ${secrets.worker} refused; token=${secrets.token}`));
    const text = lines.join('');
    for (const secret of Object.values(secrets)) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('postgres://postgres:[redacted]@db/a2a');
    expect(text).toContain('a2aw_cred-77_[redacted]');
  });

  it('leave text without secrets as it is', () => {
    const text =
      'worker 3f2a serves echo; lease 4 of task t-1 renewed (credentialId=key-1, tokens: 12)';
    expect(scrubSecrets(text)).toBe(text);
  });
});
