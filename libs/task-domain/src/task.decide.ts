import {
  A2aError,
  invalidParams,
  isInterruptedState,
  isTerminalState,
  taskNotFound,
  type Message,
  type TaskStatus,
} from '@lib/a2a-protocol';
import type { TaskCommand, WorkerUpdate } from './task.commands';
import { WorkerUpdateRejected } from './task.errors';
import type { TaskEvent } from './task.events';
import { assertNever, foldTask, type PresentTask, type TaskAggregate } from './task.state';
import { canTransition } from './task.transitions';

/**
 * Decides which events a command produces on the current state. Pure: no I/O, no clock, no randomness
 * (time and ids arrive in the command). Throws `A2aError` / `WorkerUpdateRejected` when an invariant breaks.
 */
export function decide(command: TaskCommand, state: TaskAggregate): TaskEvent[] {
  switch (command.type) {
    case 'SubmitTask':
      if (state.status === 'present') {
        throw new A2aError('INTERNAL', `task ${command.taskId} already exists`);
      }
      return [
        {
          type: 'TaskSubmitted',
          data: {
            taskId: command.taskId,
            contextId: command.contextId,
            agentId: command.agentId,
            ownerId: command.ownerId,
            message: { ...command.message, taskId: command.taskId, contextId: command.contextId },
            ...(command.metadata ? { metadata: command.metadata } : {}),
            submittedAt: command.now.toISOString(),
            ...(command.mayReply ? { mayReply: true as const } : {}),
            ...outputModes(command.acceptedOutputModes),
          },
        },
      ];
    case 'AppendUserMessage':
      return appendUserMessage(command, shown(state, command.message.taskId));
    case 'GrantLease': {
      const task = present(state);
      if (task.work !== 'queued' || isTerminalState(task.task.status.state)) {
        return [];
      }
      return [
        {
          type: 'TaskLeaseGranted',
          data: {
            leaseEpoch: task.lastLeaseEpoch + 1,
            workerId: command.workerId,
            expiresAt: new Date(command.now.getTime() + command.leaseTtlMs).toISOString(),
            attempt: task.attempt,
          },
        },
      ];
    }
    case 'ApplyWorkerUpdate':
      return applyWorkerUpdate(command.leaseEpoch, command.update, command.now, state);
    case 'RequestCancel': {
      const task = shown(state);
      const current = task.task.status.state;
      if (isTerminalState(current)) {
        throw new A2aError('TASK_NOT_CANCELABLE', `task ${task.task.id} is ${current}`, {
          taskId: task.task.id,
          state: current,
        });
      }
      if (task.work === 'leased') {
        if (task.cancel) {
          return [];
        }
        return [
          {
            type: 'TaskCancelRequested',
            data: {
              requestedBy: command.requestedBy,
              deadline: new Date(command.now.getTime() + command.cancelGraceMs).toISOString(),
              ...(command.metadata ? { metadata: command.metadata } : {}),
            },
          },
        ];
      }
      return [statusEvent({ state: 'TASK_STATE_CANCELED', timestamp: command.now.toISOString() })];
    }
    case 'ReleaseLease': {
      if (state.status === 'absent' || state.lease?.epoch !== command.leaseEpoch) {
        // Released, expired or superseded already: nothing left to hand back.
        return [];
      }
      const released: TaskEvent = {
        type: 'TaskLeaseReleased',
        data: {
          leaseEpoch: state.lease.epoch,
          workerId: state.lease.workerId,
          reason: command.reason,
        },
      };
      if (state.cancel) {
        // Nobody will work on it again: the pending cancel ends it now.
        return [
          released,
          statusEvent({ state: 'TASK_STATE_CANCELED', timestamp: command.now.toISOString() }),
        ];
      }
      return [released];
    }
    case 'ExpireLease': {
      if (state.status === 'absent' || state.lease?.epoch !== command.leaseEpoch) {
        return [];
      }
      const expired: TaskEvent = {
        type: 'TaskLeaseExpired',
        data: { leaseEpoch: state.lease.epoch, workerId: state.lease.workerId },
      };
      const at = command.now.toISOString();
      if (state.cancel) {
        return [expired, statusEvent({ state: 'TASK_STATE_CANCELED', timestamp: at })];
      }
      if (
        command.policy.onLeaseLost === 'redispatch' &&
        state.attempt < command.policy.maxAttempts
      ) {
        return [expired];
      }
      const message: Message = {
        messageId: command.messageId,
        taskId: state.task.id,
        contextId: state.task.contextId,
        role: 'ROLE_AGENT',
        parts: [{ text: 'The agent worker stopped responding before the task finished.' }],
      };
      return [expired, statusEvent({ state: 'TASK_STATE_FAILED', message, timestamp: at })];
    }
    case 'EnforceCancelDeadline': {
      if (state.status === 'absent' || !state.cancel || isTerminalState(state.task.status.state)) {
        return [];
      }
      if (command.now.getTime() < Date.parse(state.cancel.deadline)) {
        return [];
      }
      return [statusEvent({ state: 'TASK_STATE_CANCELED', timestamp: command.now.toISOString() })];
    }
    case 'RegisterPushConfig': {
      const task = present(state);
      if (task.answer.kind === 'reply') {
        // The exchange ended with a message: no task, and nothing left to deliver.
        throw taskNotFound(task.task.id);
      }
      // A pending exchange takes an inline registration of the message that opened it (ADR 0010).
      return [
        {
          type: 'PushConfigRegistered',
          data: { configId: command.configId, origin: command.origin },
        },
      ];
    }
    case 'RemovePushConfig': {
      const task = shown(state);
      // Deleting a config that is not there changes nothing and succeeds (spec digest §6: idempotent).
      return task.pushConfigIds.includes(command.configId)
        ? [{ type: 'PushConfigRemoved', data: { configId: command.configId } }]
        : [];
    }
    default:
      return assertNever(command);
  }
}

function present(state: TaskAggregate, taskId = ''): PresentTask {
  if (state.status === 'absent') {
    throw taskNotFound(taskId);
  }
  return state;
}

/** A task clients can act on: not an exchange answered (or to be answered) with a message. */
function shown(state: TaskAggregate, taskId = ''): PresentTask {
  const task = present(state, taskId);
  if (task.answer.kind !== 'task') {
    throw taskNotFound(taskId || task.task.id);
  }
  return task;
}

/** The accepted output modes an event records: none when the client named none. */
function outputModes(modes: string[] | undefined): { acceptedOutputModes?: string[] } {
  return modes && modes.length > 0 ? { acceptedOutputModes: modes } : {};
}

function appendUserMessage(
  { message, acceptedOutputModes, now }: Extract<TaskCommand, { type: 'AppendUserMessage' }>,
  task: PresentTask,
): TaskEvent[] {
  const { id, contextId } = task.task;
  const current = task.task.status.state;
  if (isTerminalState(current)) {
    throw new A2aError(
      'UNSUPPORTED_OPERATION',
      `task ${id} is ${current} and accepts no further messages`,
      { taskId: id, state: current },
    );
  }
  if (message.contextId !== undefined && message.contextId !== contextId) {
    throw invalidParams([
      {
        field: 'message.contextId',
        description: `does not match the context ${contextId} of task ${id}`,
      },
    ]);
  }
  if (!isInterruptedState(current)) {
    throw new A2aError(
      'UNSUPPORTED_OPERATION',
      `task ${id} is ${current}; messages are accepted while it waits for input`,
      { taskId: id, state: current },
    );
  }
  return [
    {
      type: 'UserMessageAppended',
      data: { message: { ...message, taskId: id, contextId }, ...outputModes(acceptedOutputModes) },
    },
    statusEvent({ state: 'TASK_STATE_WORKING', timestamp: now.toISOString() }),
  ];
}

function applyWorkerUpdate(
  leaseEpoch: number,
  update: WorkerUpdate,
  now: Date,
  state: TaskAggregate,
): TaskEvent[] {
  if (state.status === 'absent' || state.lease?.epoch !== leaseEpoch) {
    throw new WorkerUpdateRejected('LEASE_LOST', `lease epoch ${leaseEpoch} is not current`);
  }
  const { id: taskId, contextId } = state.task;
  switch (update.kind) {
    case 'status': {
      const from = state.task.status.state;
      const to = update.status.state;
      if (!canTransition(from, to)) {
        throw new WorkerUpdateRejected('INVALID_TRANSITION', `${from} cannot become ${to}`);
      }
      const message = update.status.message;
      if (message && message.role !== 'ROLE_AGENT') {
        throw new WorkerUpdateRejected('INVALID_UPDATE', 'a status message must have ROLE_AGENT');
      }
      const reported = statusEvent({
        state: to,
        ...(message ? { message: { ...message, taskId, contextId } } : {}),
        timestamp: now.toISOString(),
      });
      // A worker that pauses for input while a cancel is pending has stopped working: the cancel wins.
      if (state.cancel && isInterruptedState(to)) {
        return [
          reported,
          statusEvent({ state: 'TASK_STATE_CANCELED', timestamp: now.toISOString() }),
        ];
      }
      return [reported];
    }
    case 'message':
      if (update.message.role !== 'ROLE_AGENT') {
        throw new WorkerUpdateRejected('INVALID_UPDATE', 'an agent message must have ROLE_AGENT');
      }
      return [
        {
          type: 'AgentMessageAppended',
          data: { message: { ...update.message, taskId, contextId } },
        },
      ];
    case 'reply': {
      if (state.answer.kind !== 'pending') {
        throw new WorkerUpdateRejected(
          'INVALID_UPDATE',
          'a reply answers only the message that opened an exchange with an agent that declares message ' +
            'replies, as the first update',
        );
      }
      if (update.message.role !== 'ROLE_AGENT') {
        throw new WorkerUpdateRejected('INVALID_UPDATE', 'a reply must have ROLE_AGENT');
      }
      // A bare Message: it belongs to the conversation (context), not to a task.
      const { taskId: _taskId, ...message } = update.message;
      return [{ type: 'AgentReplied', data: { message: { ...message, contextId } } }];
    }
    case 'artifact': {
      const known = (state.task.artifacts ?? []).some(
        (a) => a.artifactId === update.artifact.artifactId,
      );
      if (update.append && !known) {
        throw new WorkerUpdateRejected(
          'INVALID_UPDATE',
          `cannot append to unknown artifact ${update.artifact.artifactId}`,
        );
      }
      return [
        {
          type: 'ArtifactChunkAppended',
          data: { artifact: update.artifact, append: update.append, lastChunk: update.lastChunk },
        },
      ];
    }
    default:
      return assertNever(update);
  }
}

function statusEvent(status: TaskStatus): TaskEvent {
  return { type: 'TaskStatusUpdated', data: { status } };
}

/**
 * Decides several commands as one change: each on the state the earlier ones left, all or none (the first
 * refusal throws). Used for updates a worker produced together and for accepting and leasing a task at once.
 */
export function decideAll(commands: readonly TaskCommand[], state: TaskAggregate): TaskEvent[] {
  const events: TaskEvent[] = [];
  let current = state;
  for (const command of commands) {
    const decided = decide(command, current);
    events.push(...decided);
    current = foldTask(decided, current);
  }
  return events;
}
