import { A2aError } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import { matchRestRoute, REST_ROUTES, type RouteMatch } from './rest-routes';

const segments = (path: string): string[] => path.split('/').slice(1);
const match = (method: string, path: string, prefix: 'optional' | 'required' = 'optional') =>
  matchRestRoute(method, segments(path), prefix);

function routed(result: RouteMatch): { rpc: string; fields: object; tenant: string | undefined } {
  if (result.kind !== 'route') {
    throw new Error(`expected a route, got ${JSON.stringify(result)}`);
  }
  return { rpc: result.route.rpc, fields: result.fields, tenant: result.tenant };
}

function reasonOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof A2aError) {
      return error.reason;
    }
    throw error;
  }
  throw new Error('expected an A2aError');
}

describe('matchRestRoute (spec digest §2, §8.2)', () => {
  it.each([
    ['POST', '/message:send', 'SendMessage', {}],
    ['POST', '/message:stream', 'SendStreamingMessage', {}],
    ['GET', '/tasks/t1', 'GetTask', { id: 't1' }],
    ['GET', '/tasks', 'ListTasks', {}],
    ['POST', '/tasks/t1:cancel', 'CancelTask', { id: 't1' }],
    ['GET', '/tasks/t1:subscribe', 'SubscribeToTask', { id: 't1' }],
    ['POST', '/tasks/t1:subscribe', 'SubscribeToTask', { id: 't1' }],
    [
      'POST',
      '/tasks/t1/pushNotificationConfigs',
      'CreateTaskPushNotificationConfig',
      { taskId: 't1' },
    ],
    [
      'GET',
      '/tasks/t1/pushNotificationConfigs',
      'ListTaskPushNotificationConfigs',
      { taskId: 't1' },
    ],
    [
      'GET',
      '/tasks/t1/pushNotificationConfigs/c1',
      'GetTaskPushNotificationConfig',
      { taskId: 't1', id: 'c1' },
    ],
    [
      'DELETE',
      '/tasks/t1/pushNotificationConfigs/c1',
      'DeleteTaskPushNotificationConfig',
      { taskId: 't1', id: 'c1' },
    ],
    ['GET', '/extendedAgentCard', 'GetExtendedAgentCard', {}],
  ])('%s %s is %s', (method, path, rpc, fields) => {
    expect(routed(match(method, path))).toStrictEqual({ rpc, fields, tenant: undefined });
    expect(routed(match(method, `/demo%2Fecho${path}`))).toStrictEqual({
      rpc,
      fields,
      tenant: 'demo/echo',
    });
    expect(routed(match(method, `/demo%2Fecho${path}`, 'required'))).toMatchObject({
      rpc,
      tenant: 'demo/echo',
    });
  });

  it('covers every A2A method, SubscribeToTask on GET and POST', () => {
    expect(new Set(REST_ROUTES.map((r) => r.rpc)).size).toBe(11);
    expect(
      REST_ROUTES.filter((r) => r.rpc === 'SubscribeToTask').map((r) => r.method),
    ).toStrictEqual(['GET', 'POST']);
  });

  it('reads a route without a prefix first: /tasks/tasks is GetTask of "tasks"', () => {
    expect(routed(match('GET', '/tasks/tasks'))).toStrictEqual({
      rpc: 'GetTask',
      fields: { id: 'tasks' },
      tenant: undefined,
    });
  });

  it('decodes variables; an encoded ":" belongs to the id, not to a verb', () => {
    expect(routed(match('GET', '/tasks/a%3Acancel')).fields).toStrictEqual({ id: 'a:cancel' });
    expect(routed(match('POST', '/tasks/a%20b:cancel')).fields).toStrictEqual({ id: 'a b' });
  });

  it('a first segment that is no route is read as a tenant (the gateway then checks it)', () => {
    expect(routed(match('POST', '/v1/message:send'))).toMatchObject({
      rpc: 'SendMessage',
      tenant: 'v1',
    });
  });

  it('a required tenant prefix must be there', () => {
    expect(match('GET', '/tasks', 'required')).toStrictEqual({ kind: 'not-found' });
    expect(match('GET', '/tasks/t1', 'required')).toStrictEqual({ kind: 'not-found' });
  });

  it('unknown paths are not-found; known paths with another method list the allowed ones', () => {
    for (const path of [
      '',
      '/',
      '/v1/v2/message:send',
      '/message',
      '/tasks/',
      '/tasks/t1:resubscribe',
      '//tasks',
    ]) {
      expect(match('POST', path), path).toStrictEqual({ kind: 'not-found' });
    }
    expect(match('GET', '/message:send')).toStrictEqual({
      kind: 'method-not-allowed',
      allow: ['POST'],
    });
    expect(match('PUT', '/tasks/t1:subscribe')).toStrictEqual({
      kind: 'method-not-allowed',
      allow: ['GET', 'POST'],
    });
    expect(match('POST', '/tasks/t1/pushNotificationConfigs/c1')).toStrictEqual({
      kind: 'method-not-allowed',
      allow: ['GET', 'DELETE'],
    });
  });

  it('a bad percent-escape is INVALID_REQUEST', () => {
    expect(reasonOf(() => match('GET', '/tasks/%ZZ'))).toBe('INVALID_REQUEST');
    expect(reasonOf(() => match('GET', '/%E0%A4%A/tasks'))).toBe('INVALID_REQUEST');
  });
});
