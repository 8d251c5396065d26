import { describe, expect, it } from 'vitest';
import { agentMessage, textPart } from './agent-messages';

const scope = { taskId: 'task-1', contextId: 'ctx-1' };

describe('agentMessage', () => {
  it('wraps a text in one text part of a ROLE_AGENT message scoped to the task', () => {
    expect(agentMessage(scope, 'hello', () => 'm-1')).toEqual({
      messageId: 'm-1',
      taskId: 'task-1',
      contextId: 'ctx-1',
      role: 'ROLE_AGENT',
      parts: [{ text: 'hello' }],
    });
  });

  it('keeps the given parts as they are', () => {
    const parts = [
      textPart('a'),
      { data: { n: 1 } },
      { url: 'https://example.com/x', mediaType: 'text/html' },
    ];
    expect(agentMessage(scope, parts).parts).toEqual(parts);
  });

  it('gives every message a fresh UUID', () => {
    const ids = new Set(Array.from({ length: 50 }, () => agentMessage(scope, 'x').messageId));
    expect(ids.size).toBe(50);
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });
});
