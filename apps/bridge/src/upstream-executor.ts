import {
  Message as SdkMessage,
  StreamResponse as SdkStreamResponse,
  Task as SdkTask,
  type SendMessageRequest,
} from '@a2a-js/sdk';
import type { Client, RequestOptions } from '@a2a-js/sdk/client';
import type { Message, Task, TaskStatus } from '@lib/a2a-protocol';
import { describeUpstreamError } from '@lib/upstream';
import type {
  AgentExecutor,
  ExecutionEventBus,
  ExecutionUpdate,
  RequestContext,
  WorkerLogger,
} from '@lib/worker-sdk';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkEventSize, tooLarge } from './event-limit';
import { isRetryable } from './upstream-errors';
import {
  artifactUpdate,
  endsAssignment,
  linkOf,
  platformMessage,
  statusUpdate,
  taskIdOf,
  text,
  upstreamMessage,
  type PlatformScope,
  type UpstreamEvent,
  type UpstreamLink,
} from './upstream-mapping';

/** An upstream agent as one bridge worker calls it. */
export interface Upstream {
  /** The upstream card's name, for the bridge's own status messages. */
  readonly name: string;
  readonly client: Client;
  /** The upstream streams: SendStreamingMessage and SubscribeToTask, else SendMessage and GetTask polling. */
  readonly streaming: boolean;
  /** The headers of the next call (an API key, `Authorization`, a bearer token of OAuth 2). */
  readonly headers: () => Promise<Readonly<Record<string, string>>>;
  /**
   * Its events are measured here, in their JSON form, against the event limit: gRPC, whose messages grpc-js
   * reads whole. The HTTP bindings' bodies are cut at the limit as they are read (`limitedResponse`).
   */
  readonly measureEvents: boolean;
}

export interface UpstreamSettings {
  /** How long calls that fail for want of an answer are retried, counted from the last progress. */
  readonly retryBudgetMs: number;
  /** An upstream event larger than this (its JSON form) fails the task (UPSTREAM_EVENT_LIMIT_BYTES). */
  readonly eventLimitBytes: number;
  /** The first wait between two GetTask polls (and between two retries); it doubles up to `maxWaitMs`. */
  readonly firstWaitMs: number;
  readonly maxWaitMs: number;
}

/** The upstream cannot do this task: the platform task fails with this message. */
class UpstreamFailure extends Error {}

/**
 * An agent whose work is done by an upstream A2A server (docs/upstream.md): each assignment sends the client's
 * message upstream with the official SDK client (same messageId), and every upstream event becomes an update
 * of the platform task. An assignment of a message already sent (a bridge crashed, or the lease was lost)
 * follows the upstream task instead of sending it again.
 */
export class UpstreamExecutor implements AgentExecutor {
  /** The upstream tasks of the assignments running here, for a cancel. */
  private readonly links = new Map<string, UpstreamLink>();

  constructor(
    private readonly upstream: Upstream,
    private readonly settings: UpstreamSettings,
    private readonly logger: WorkerLogger,
  ) {}

  async execute(context: RequestContext, events: ExecutionEventBus): Promise<void> {
    const run = new UpstreamRun(this.upstream, this.settings, context, events, (link) =>
      this.links.set(context.taskId, link),
    );
    try {
      await run.run();
    } catch (error) {
      if (context.signal.aborted) {
        return;
      }
      if (error instanceof UpstreamFailure) {
        await events.fail(error.message);
        return;
      }
      throw error;
    } finally {
      this.links.delete(context.taskId);
    }
  }

  /** Cancels the upstream task too; the platform task is CANCELED whatever the upstream answers. */
  async cancelTask(taskId: string): Promise<void> {
    const link = this.links.get(taskId);
    if (!link) {
      return;
    }
    try {
      await this.upstream.client.cancelTask(
        { tenant: '', id: link.taskId, metadata: undefined },
        {
          serviceParameters: { ...(await this.upstream.headers()) },
          signal: AbortSignal.timeout(10_000),
        },
      );
    } catch (error) {
      this.logger.warn(
        `upstream task ${link.taskId} was not canceled: ${describeUpstreamError(error)}`,
      );
    }
  }
}

/** One assignment: the message sent (or found sent), then the upstream task followed until it ends it. */
class UpstreamRun {
  private link: UpstreamLink | undefined;
  /** The link of this assignment's message is in the log. */
  private linked = false;
  private done = false;
  private lastStatus: string;
  private readonly artifacts = new Map<string, string>();
  /** The messages the platform task shows already: an upstream status naming one of them is a past one. */
  private readonly known = new Set<string>();
  private readonly scope: PlatformScope;
  private progressAt = Date.now();

  constructor(
    private readonly upstream: Upstream,
    private readonly settings: UpstreamSettings,
    private readonly context: RequestContext,
    private readonly events: ExecutionEventBus,
    private readonly onLink: (link: UpstreamLink) => void,
  ) {
    this.scope = { taskId: context.taskId, contextId: context.contextId };
    this.link = linkOf(context.task);
    this.lastStatus = statusKey(context.task.status);
    for (const message of [...(context.task.history ?? []), context.task.status.message]) {
      if (message) {
        this.known.add(message.messageId);
      }
    }
    for (const artifact of context.task.artifacts ?? []) {
      this.artifacts.set(artifact.artifactId, JSON.stringify(artifact));
    }
  }

  async run(): Promise<void> {
    if (this.link && this.link.messageId === this.context.userMessage.messageId) {
      // Sent by an earlier assignment: follow the upstream task, never send it twice.
      this.linked = true;
      this.onLink(this.link);
    } else {
      await this.retrying(() => this.send());
    }
    if (!this.done) {
      await this.retrying(() => this.follow());
    }
  }

  private async options(): Promise<RequestOptions> {
    return {
      serviceParameters: { ...(await this.upstream.headers()) },
      signal: this.context.signal,
    };
  }

  private async send(): Promise<void> {
    if (this.linked) {
      return; // a stream that broke after the upstream took the message: followed, not sent again
    }
    const request: SendMessageRequest = {
      tenant: '',
      message: SdkMessage.fromJSON(upstreamMessage(this.context.userMessage, this.link)),
      // Without a stream, the upstream answers at once and its task is polled: a long task holds no
      // connection open, and an answer lost on the way is found by polling, not by sending again.
      configuration: this.upstream.streaming
        ? undefined
        : {
            acceptedOutputModes: [],
            taskPushNotificationConfig: undefined,
            returnImmediately: true,
          },
      metadata: undefined,
    };
    if (this.upstream.streaming) {
      for await (const event of this.upstream.client.sendMessageStream(
        request,
        await this.options(),
      )) {
        await this.apply(SdkStreamResponse.toJSON(event) as UpstreamEvent);
        if (this.done) {
          return;
        }
      }
      return;
    }
    const result = await this.upstream.client.sendMessage(request, await this.options());
    await this.apply(
      'role' in result
        ? { message: SdkMessage.toJSON(result) as Message }
        : { task: SdkTask.toJSON(result) as Task },
    );
  }

  /** Reads the upstream task until it ends the assignment: GetTask, then its stream or polls. */
  private async follow(): Promise<void> {
    const link = this.link;
    if (!link) {
      throw new UpstreamFailure(`${this.upstream.name} answered without naming a task`);
    }
    let waitMs = this.settings.firstWaitMs;
    while (!this.done) {
      const task = await this.upstream.client.getTask(
        { tenant: '', id: link.taskId, historyLength: 0 },
        await this.options(),
      );
      await this.apply({ task: SdkTask.toJSON(task) as Task });
      if (this.done) {
        return;
      }
      if (this.upstream.streaming) {
        for await (const event of this.upstream.client.resubscribeTask(
          { tenant: '', id: link.taskId },
          await this.options(),
        )) {
          await this.apply(SdkStreamResponse.toJSON(event) as UpstreamEvent);
          if (this.done) {
            return;
          }
        }
      }
      // A poll found the task still running, or its stream ended before the task did: read it again soon.
      await sleep(waitMs, undefined, { signal: this.context.signal });
      waitMs = Math.min(waitMs * 2, this.settings.maxWaitMs);
    }
  }

  /**
   * Runs `call` again while it fails for want of an answer (no connection, a broken stream, 5xx), until
   * `retryBudgetMs` passed without progress. An A2A error the upstream answered is final.
   */
  private async retrying(call: () => Promise<void>): Promise<void> {
    let waitMs = this.settings.firstWaitMs;
    for (;;) {
      try {
        await call();
        return;
      } catch (error) {
        if (this.context.signal.aborted || error instanceof UpstreamFailure) {
          throw error;
        }
        const oversized = tooLarge(error, this.settings.eventLimitBytes);
        if (oversized) {
          throw new UpstreamFailure(`${this.upstream.name} sent ${oversized.message}`);
        }
        if (!isRetryable(error)) {
          throw new UpstreamFailure(
            `${this.upstream.name} refused: ${describeUpstreamError(error)}`,
          );
        }
        if (Date.now() - this.progressAt > this.settings.retryBudgetMs) {
          throw new UpstreamFailure(
            `${this.upstream.name} stayed unreachable for ${Math.round(this.settings.retryBudgetMs / 1000)} s: ${describeUpstreamError(error)}`,
          );
        }
        await sleep(waitMs, undefined, { signal: this.context.signal });
        waitMs = Math.min(waitMs * 2, this.settings.maxWaitMs);
      }
    }
  }

  /** Publishes what an upstream event changes; the first one of this message records the link. */
  private async apply(event: UpstreamEvent): Promise<void> {
    if (this.upstream.measureEvents) {
      checkEventSize(event, this.settings.eventLimitBytes);
    }
    if ('message' in event) {
      await this.answer(event.message);
      return;
    }
    const taskId = taskIdOf(event) ?? '';
    if (this.linked && this.link && taskId !== this.link.taskId) {
      throw new UpstreamFailure(
        `${this.upstream.name} sent an event of task ${taskId} while this message went to task ${this.link.taskId}`,
      );
    }
    if (!this.linked) {
      const contextId =
        'task' in event
          ? event.task.contextId
          : 'statusUpdate' in event
            ? event.statusUpdate.contextId
            : event.artifactUpdate.contextId;
      this.link = { taskId, contextId, messageId: this.context.userMessage.messageId };
      this.onLink(this.link);
      const status =
        'task' in event
          ? event.task.status
          : 'statusUpdate' in event
            ? event.statusUpdate.status
            : undefined;
      if (!status?.message) {
        await this.publish({
          kind: 'status',
          status: {
            state: 'TASK_STATE_WORKING',
            message: platformMessage(
              {
                messageId: `${taskId}:${this.link.messageId}`,
                role: 'ROLE_AGENT',
                parts: [text(`Sent to ${this.upstream.name}.`)],
              },
              this.scope,
              this.link,
            ),
          },
        });
      }
      this.linked = true;
    }
    if ('task' in event) {
      for (const artifact of event.task.artifacts ?? []) {
        await this.publish(artifactUpdate(artifact, false, true));
      }
      await this.publishStatus(event.task.status);
    } else if ('statusUpdate' in event) {
      await this.publishStatus(event.statusUpdate.status);
    } else {
      const { artifact, append, lastChunk } = event.artifactUpdate;
      await this.publish(artifactUpdate(artifact, append, lastChunk));
    }
  }

  /** A bare Message: the reply to a new message, else an agent message that ends the turn. */
  private async answer(message: Message): Promise<void> {
    if (!this.linked && this.context.mayReply) {
      await this.events.reply(message.parts);
      this.done = true;
      return;
    }
    await this.publish({ kind: 'message', message: platformMessage(message, this.scope) });
    await this.publishStatus({ state: 'TASK_STATE_COMPLETED' });
  }

  private async publishStatus(status: TaskStatus): Promise<void> {
    if (status.state === 'TASK_STATE_SUBMITTED' || status.state === 'TASK_STATE_UNSPECIFIED') {
      return;
    }
    // The upstream task as it was before this message (its stream opens with it, a poll may still see it):
    // the question the client just answered is not asked again.
    if (status.message && this.known.has(status.message.messageId)) {
      return;
    }
    await this.publish(statusUpdate(status, this.scope, this.link));
  }

  /** Publishes an update unless it repeats what the task shows already (a poll reads the same state again). */
  private async publish(update: ExecutionUpdate): Promise<void> {
    if (this.done) {
      return;
    }
    if (update.kind === 'status') {
      const key = statusKey(update.status);
      // The same state again, with the same message or none, changes nothing the client sees.
      const sameState = key.split('|')[0] === this.lastStatus.split('|')[0];
      if (key === this.lastStatus || (sameState && !update.status.message)) {
        return;
      }
      this.lastStatus = key;
    } else if (update.kind === 'artifact' && !update.append) {
      const seen = JSON.stringify(update.artifact);
      if (this.artifacts.get(update.artifact.artifactId) === seen) {
        return;
      }
      this.artifacts.set(update.artifact.artifactId, seen);
    }
    await this.events.publish(update);
    this.progressAt = Date.now();
    if (update.kind === 'status' && endsAssignment(update.status.state)) {
      this.done = true;
    }
  }
}

function statusKey(status: TaskStatus): string {
  return `${status.state}|${status.message?.messageId ?? ''}`;
}
