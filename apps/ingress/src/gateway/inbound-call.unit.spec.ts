import { currentLogContext } from '@lib/observability';
import { agentIdOf, tenantIdOf } from '@lib/tenancy';
import { describe, expect, it } from 'vitest';
import { handleInbound, noteRoute, noteTaskOf, requestIdOf } from './inbound-call';

describe('requestIdOf', () => {
  it.each(['abc-123', 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6', 'a'.repeat(128), "x!#$%&'*+.^_`|~"])(
    'keeps the client’s id %s',
    (id) => expect(requestIdOf(id)).toBe(id),
  );

  it.each([
    undefined,
    '',
    'a'.repeat(129),
    'has space',
    'semi;colon',
    'quote"',
    'é',
    'line\nbreak',
  ])('makes a new id instead of %j', (id) => {
    const made = requestIdOf(id);
    expect(made).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(requestIdOf(id)).not.toBe(made);
  });
});

describe('the log context of an inbound call', () => {
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  it('holds the request id and the caller’s trace id, then the agent and the task once known', () => {
    const seen = handleInbound({ binding: 'JSONRPC', requestId: 'r-1', traceparent }, () => {
      const opened = { ...currentLogContext() };
      noteRoute({ tenantId: tenantIdOf('acme'), agentId: agentIdOf('echo') });
      noteTaskOf({ task: { id: 'task-1', status: {} } });
      return { opened, answered: { ...currentLogContext() } };
    });
    expect(seen.opened).toStrictEqual({
      requestId: 'r-1',
      traceId: '0af7651916cd43dd8448eb211c80319c',
    });
    expect(seen.answered).toStrictEqual({
      requestId: 'r-1',
      traceId: '0af7651916cd43dd8448eb211c80319c',
      tenant: 'acme',
      agent: 'echo',
      taskId: 'task-1',
    });
    expect(currentLogContext()).toBeUndefined();
  });

  it.each([
    [{ task: { id: 't-send', status: {} } }, 't-send'],
    [{ id: 't-get', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } }, 't-get'],
    [{ taskId: 't-push', id: 'config-1', url: 'https://example.com' }, 't-push'],
    [{ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [] } }, undefined],
    [{ tasks: [{ id: 'a', status: {} }] }, undefined],
    [undefined, undefined],
  ])('notes the task of result %j', (result, taskId) => {
    const noted = handleInbound({ binding: 'GRPC', requestId: 'r', traceparent: undefined }, () => {
      noteTaskOf(result);
      return currentLogContext()?.taskId;
    });
    expect(noted).toBe(taskId);
  });
});
