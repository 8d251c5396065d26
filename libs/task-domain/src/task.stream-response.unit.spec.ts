import type { Message } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import type { TaskEvent } from './task.events';
import { toStreamResponse } from './task.stream-response';

const ref = { taskId: 't1', contextId: 'c1' };
const user: Message = { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] };
const agent: Message = { messageId: 'm2', role: 'ROLE_AGENT', parts: [{ text: 'yo' }] };

describe('toStreamResponse (§10.6)', () => {
  it('shows a submitted task as its first snapshot', () => {
    const event: TaskEvent = {
      type: 'TaskSubmitted',
      data: {
        taskId: 't1',
        contextId: 'c1',
        agentId: 'a',
        ownerId: 'o',
        message: { ...user, taskId: 't1', contextId: 'c1' },
        submittedAt: '2026-01-01T00:00:00.000Z',
      },
    };
    expect(toStreamResponse(event, ref)).toEqual({
      task: {
        id: 't1',
        contextId: 'c1',
        status: { state: 'TASK_STATE_SUBMITTED', timestamp: '2026-01-01T00:00:00.000Z' },
        history: [{ ...user, taskId: 't1', contextId: 'c1' }],
      },
    });
  });

  it('maps status, artifact chunks and agent messages to their stream events', () => {
    const status = { state: 'TASK_STATE_WORKING' as const, timestamp: '2026-01-01T00:00:01.000Z' };
    expect(toStreamResponse({ type: 'TaskStatusUpdated', data: { status } }, ref)).toEqual({
      statusUpdate: { taskId: 't1', contextId: 'c1', status },
    });
    const artifact = { artifactId: 'a1', parts: [{ text: 'x' }] };
    expect(
      toStreamResponse(
        { type: 'ArtifactChunkAppended', data: { artifact, append: true, lastChunk: false } },
        ref,
      ),
    ).toEqual({ artifactUpdate: { taskId: 't1', contextId: 'c1', artifact, append: true } });
    expect(
      toStreamResponse({ type: 'AgentMessageAppended', data: { message: agent } }, ref),
    ).toEqual({ message: agent });
  });

  it("maps an agent's reply to the one message the client of the exchange got", () => {
    const reply = { messageId: 'r1', role: 'ROLE_AGENT' as const, contextId: 'c1', parts: [] };
    expect(toStreamResponse({ type: 'AgentReplied', data: { message: reply } }, ref)).toEqual({
      message: reply,
    });
  });

  it('shows nothing for platform facts and client messages', () => {
    const hidden: TaskEvent[] = [
      { type: 'UserMessageAppended', data: { message: user } },
      { type: 'TaskCancelRequested', data: { requestedBy: 'u', deadline: 'd' } },
      {
        type: 'TaskLeaseGranted',
        data: { leaseEpoch: 1, workerId: 'w', expiresAt: 'e', attempt: 1 },
      },
      { type: 'TaskLeaseExpired', data: { leaseEpoch: 1, workerId: 'w' } },
    ];
    for (const event of hidden) {
      expect(toStreamResponse(event, ref)).toBeNull();
    }
  });
});
