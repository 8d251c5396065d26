import { describe, expect, it } from 'vitest';
import type { StreamEvent } from './a2a-client';
import type { StreamResponse } from './a2a-model';
import {
  agentParts,
  alreadySeen,
  continuedTask,
  newConversation,
  record,
  taskIsLive,
  timeline,
} from './conversation';

const ids = { taskId: 't1', contextId: 'c1' };

function event(id: number, response: StreamResponse): { kind: 'event'; event: StreamEvent } {
  return { kind: 'event', event: { id: String(id), response } };
}

function working(id: number, text: string): ReturnType<typeof event> {
  return event(id, {
    statusUpdate: {
      ...ids,
      status: {
        state: 'TASK_STATE_WORKING',
        message: { messageId: `m${id}`, role: 'ROLE_AGENT', parts: [{ text }] },
      },
    },
  });
}

function chunk(id: number, text: string, append: boolean): ReturnType<typeof event> {
  return event(id, {
    artifactUpdate: {
      ...ids,
      artifact: { artifactId: 'a', name: 'count', parts: [{ text }] },
      append,
    },
  });
}

describe('a conversation', () => {
  it('follows the task and the last event id, and knows an event it already has', () => {
    const conversation = newConversation('demo/countdown');
    record(
      conversation,
      event(2, { task: { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_SUBMITTED' } } }),
    );
    record(conversation, working(3, 'step 1/2'));
    expect(conversation).toMatchObject({
      contextId: 'c1',
      task: { id: 't1', state: 'TASK_STATE_WORKING' },
      lastEventId: '3',
    });
    expect(taskIsLive(conversation)).toBe(true);
    expect(continuedTask(conversation)).toBe('t1');
    expect(alreadySeen(conversation, working(3, 'step 1/2').event)).toBe(true);
    expect(alreadySeen(conversation, working(4, 'step 2/2').event)).toBe(false);
  });

  it('continues a task that waits for input, and no ended task', () => {
    const conversation = newConversation('demo/interview');
    record(
      conversation,
      event(2, { statusUpdate: { ...ids, status: { state: 'TASK_STATE_INPUT_REQUIRED' } } }),
    );
    expect(taskIsLive(conversation)).toBe(false);
    expect(continuedTask(conversation)).toBe('t1');
    record(
      conversation,
      event(5, { statusUpdate: { ...ids, status: { state: 'TASK_STATE_CANCELED' } } }),
    );
    expect(continuedTask(conversation)).toBeUndefined();
  });

  it('shows artifact chunks appended in place and statuses in order', () => {
    const entries = timeline([
      { kind: 'sent', message: { messageId: 'u1', role: 'ROLE_USER', parts: [{ text: '2' }] } },
      working(3, 'step 1/2'),
      chunk(4, '2', false),
      working(5, 'step 2/2'),
      chunk(6, '1', true),
    ]);
    expect(entries.map((e) => e.kind)).toEqual(['user', 'status', 'artifact', 'status']);
    expect(entries[2]).toMatchObject({ artifactId: 'a', parts: [{ text: '2' }, { text: '1' }] });
  });

  it('does not repeat the status message or the agent UI of a snapshot of a task it has seen', () => {
    const ui = {
      data: [{ version: 'v0.9', deleteSurface: { surfaceId: 's' } }],
      mediaType: 'application/json+a2ui',
    };
    const snapshot = event(7, {
      task: {
        id: 't1',
        contextId: 'c1',
        status: {
          state: 'TASK_STATE_INPUT_REQUIRED',
          message: { messageId: 'q', role: 'ROLE_AGENT', parts: [{ text: 'Name?' }, ui] },
        },
      },
    });
    const seen = new Set<string>();
    expect(agentParts(snapshot, seen)).toHaveLength(2);
    expect(agentParts(snapshot, seen)).toEqual([]);
    const entries = timeline([snapshot, snapshot]);
    expect(entries.map((e) => (e.kind === 'status' ? e.parts.length : -1))).toEqual([2, 0]);
  });
});
