import type { Message, Task } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import {
  endsAssignment,
  linkOf,
  platformMessage,
  UPSTREAM_LINK_KEY,
  upstreamMessage,
  type UpstreamLink,
} from './upstream-mapping';

const link: UpstreamLink = { taskId: 'up-1', contextId: 'up-ctx', messageId: 'm-1' };
const scope = { taskId: 'p-1', contextId: 'p-ctx' };
const agentSays = (messageId: string, metadata?: Message['metadata']): Message => ({
  messageId,
  role: 'ROLE_AGENT',
  parts: [{ text: 'hi' }],
  ...(metadata ? { metadata } : {}),
});

describe('the link between a platform task and its upstream task', () => {
  it('is read from the newest message that carries it', () => {
    const older = { ...link, taskId: 'up-0' };
    const task: Task = {
      id: 'p-1',
      contextId: 'p-ctx',
      status: { state: 'TASK_STATE_WORKING' },
      history: [
        agentSays('a', { [UPSTREAM_LINK_KEY]: { ...older } }),
        agentSays('b', { [UPSTREAM_LINK_KEY]: { ...link } }),
        { messageId: 'c', role: 'ROLE_USER', parts: [{ text: 'answer' }] },
      ],
    };
    expect(linkOf(task)).toEqual(link);
    expect(
      linkOf({
        ...task,
        status: {
          state: 'TASK_STATE_INPUT_REQUIRED',
          message: agentSays('d', { [UPSTREAM_LINK_KEY]: { ...older } }),
        },
      }),
    ).toEqual(older);
  });

  it('is absent from a task that never reached the upstream, or with a malformed entry', () => {
    const task: Task = {
      id: 'p-1',
      contextId: 'p-ctx',
      status: {
        state: 'TASK_STATE_WORKING',
        message: agentSays('a', { [UPSTREAM_LINK_KEY]: 'x' }),
      },
    };
    expect(linkOf(task)).toBeUndefined();
  });

  it('travels on the messages published into the platform task, which take its ids', () => {
    const published = platformMessage(
      { ...agentSays('u-1', { kept: true }), taskId: 'up-1', contextId: 'up-ctx' },
      scope,
      link,
    );
    expect(published).toMatchObject({ messageId: 'u-1', taskId: 'p-1', contextId: 'p-ctx' });
    expect(published.metadata).toEqual({ kept: true, [UPSTREAM_LINK_KEY]: link });
  });
});

describe('upstreamMessage', () => {
  it('keeps the messageId and moves the message into the upstream task', () => {
    const user: Message = {
      messageId: 'm-2',
      taskId: 'p-1',
      contextId: 'p-ctx',
      role: 'ROLE_USER',
      parts: [{ text: 'Ada' }],
    };
    expect(upstreamMessage(user, link)).toEqual({
      messageId: 'm-2',
      taskId: 'up-1',
      contextId: 'up-ctx',
      role: 'ROLE_USER',
      parts: [{ text: 'Ada' }],
    });
    expect(upstreamMessage(user, undefined)).toEqual({
      messageId: 'm-2',
      role: 'ROLE_USER',
      parts: [{ text: 'Ada' }],
    });
  });
});

describe('endsAssignment', () => {
  it('holds for terminal and interrupted states only', () => {
    expect(endsAssignment('TASK_STATE_COMPLETED')).toBe(true);
    expect(endsAssignment('TASK_STATE_AUTH_REQUIRED')).toBe(true);
    expect(endsAssignment('TASK_STATE_WORKING')).toBe(false);
  });
});
