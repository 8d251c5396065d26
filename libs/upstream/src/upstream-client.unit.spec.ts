import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { describe, expect, it } from 'vitest';
import { describeUpstreamError } from './upstream-client';

describe('describeUpstreamError', () => {
  it('names an A2A error by its reason, and cuts a long transport error', () => {
    expect(describeUpstreamError(new TaskNotFoundError('no task t'))).toMatch(/^TASK_NOT_FOUND: /);
    expect(describeUpstreamError(new Error('x'.repeat(1_000)))).toHaveLength(301);
  });
});
