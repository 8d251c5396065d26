import { TASK_EVENT_SCHEMA_VERSION } from '@lib/task-domain';
import { describe, expect, it } from 'vitest';
import { taskEventOf, UnreadableTaskEvent } from './task-log';

const data = { configId: 'c-1' };

describe('a row of the task log as a task event', () => {
  it('is the registered event when written at the schema version this code reads', () => {
    expect(
      taskEventOf({
        event_type: 'PushConfigRemoved',
        schema_version: TASK_EVENT_SCHEMA_VERSION,
        data,
      }),
    ).toEqual({ type: 'PushConfigRemoved', data });
  });

  it('is refused for a registered type at another schema version (no upcaster)', () => {
    for (const version of [TASK_EVENT_SCHEMA_VERSION + 1, 0]) {
      expect(() =>
        taskEventOf({ event_type: 'PushConfigRemoved', schema_version: version, data }),
      ).toThrow(UnreadableTaskEvent);
    }
    expect(() => taskEventOf({ event_type: 'TaskSubmitted', schema_version: 2, data })).toThrow(
      'TaskSubmitted at schema version 2 cannot be read',
    );
  });

  it('is passed on as it is for a type written by a newer version, whatever its schema version', () => {
    expect(taskEventOf({ event_type: 'TaskSomethingNew', schema_version: 3, data })).toEqual({
      type: 'TaskSomethingNew',
      data,
    });
  });
});
