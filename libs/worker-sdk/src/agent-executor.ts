import type { Artifact, Message, Part, Task, TaskStateName, TaskStatus } from '@lib/a2a-protocol';

/** What the agent is asked to do: one assignment of one task (a2a-js `RequestContext`, plus a signal). */
export interface RequestContext {
  readonly taskId: string;
  readonly contextId: string;
  /** The user message that triggered this assignment (the last user message in `task.history`). */
  readonly userMessage: Message;
  /** The task as the platform knew it when the lease was granted: status, history, artifacts. */
  readonly task: Task;
  /** 1 for the first dispatch of this message; higher when a lost lease was re-dispatched. */
  readonly attempt: number;
  /**
   * The message may be answered with {@link ExecutionEventBus.reply} instead of a task: the agent's profile
   * declares `messageReplies`, this is the message that opened the exchange and nothing was published yet.
   */
  readonly mayReply: boolean;
  /**
   * Aborted when the client cancels the task (reason `TASK_CANCELED`), when the worker loses the lease
   * (`LEASE_LOST`) or when the worker shuts down after its grace period (`WORKER_SHUTDOWN`). The reason is
   * a `WorkerError`. Stop promptly; after a cancel the SDK publishes TASK_STATE_CANCELED.
   */
  readonly signal: AbortSignal;
}

/** One execution update, mirroring `PublishUpdateRequest.update` in the ProtoJSON model. */
export type ExecutionUpdate =
  | { readonly kind: 'status'; readonly status: TaskStatus }
  /** A bare Message answering the client's message: no task is created (see `ExecutionEventBus.reply`). */
  | { readonly kind: 'reply'; readonly message: Message }
  | { readonly kind: 'message'; readonly message: Message }
  | {
      readonly kind: 'artifact';
      readonly artifact: Artifact;
      /** Append these parts to the artifact with the same id (it must exist) instead of replacing it. */
      readonly append?: boolean;
      /** This is the artifact's final chunk. */
      readonly lastChunk?: boolean;
    };

/** An artifact or a chunk of one, for {@link ExecutionEventBus.artifact}. */
export interface ArtifactChunk {
  /** Defaults to a fresh UUID; reuse the returned id to append further chunks. */
  readonly artifactId?: string;
  readonly name?: string;
  readonly description?: string;
  readonly parts: Part[];
  readonly metadata?: Artifact['metadata'];
  /** URIs of the extensions whose data the parts carry (e.g. A2UI's). */
  readonly extensions?: string[];
  readonly append?: boolean;
  readonly lastChunk?: boolean;
}

/**
 * Publishes the agent's updates to the platform, in call order, one `PublishUpdate` each; every method
 * resolves once the platform stored the update. Transient failures are retried while the lease lasts.
 * A method rejects with a `WorkerError` when the update cannot be stored: `LEASE_LOST` (stop working),
 * `TASK_ENDED` (a terminal or interrupted status was already published), `UPDATE_REJECTED` (a bug) or
 * `WORKER_SHUTDOWN`. Status helpers take a text or parts and wrap them in a fresh ROLE_AGENT message.
 */
export interface ExecutionEventBus {
  /** TASK_STATE_WORKING, optionally with a progress message. */
  working(text?: string): Promise<void>;
  /** Any state; terminal (COMPLETED, FAILED, CANCELED, REJECTED) and interrupted ones end the assignment. */
  status(state: TaskStateName, message?: string | Part[]): Promise<void>;
  /** TASK_STATE_INPUT_REQUIRED with the question; the client's answer arrives as a new assignment. */
  inputRequired(text: string): Promise<void>;
  /** TASK_STATE_COMPLETED. */
  complete(text?: string): Promise<void>;
  /** TASK_STATE_FAILED with the reason shown to the client. */
  fail(text: string): Promise<void>;
  /** TASK_STATE_CANCELED. */
  cancelled(): Promise<void>;
  /** An agent message added to the task history. */
  message(parts: Part[]): Promise<void>;
  /**
   * Answers the client's message with a bare Message (a ROLE_AGENT message of the text or parts) instead of a
   * task: the client gets `{"message": …}` and no task ever exists. Only while `context.mayReply` holds (it
   * must be the assignment's first and only update); it ends the assignment like a terminal status.
   */
  reply(message: string | Part[]): Promise<void>;
  /** An artifact or a chunk of one; resolves with its artifact id. */
  artifact(chunk: ArtifactChunk): Promise<string>;
  /** Any update, as built by the caller. */
  publish(update: ExecutionUpdate): Promise<void>;
}

/**
 * The agent (a2a-js `AgentExecutor` shape). `execute` runs one assignment. When it returns without having
 * published a terminal or interrupted status, the SDK publishes TASK_STATE_COMPLETED; when it throws, the
 * SDK publishes TASK_STATE_FAILED with the error's message; when the task was cancelled, the SDK publishes
 * TASK_STATE_CANCELED.
 */
export interface AgentExecutor {
  execute(context: RequestContext, events: ExecutionEventBus): Promise<void>;
  /**
   * Called as soon as the client asks to cancel, while `execute` may still run (its signal is aborted at the
   * same time). It may publish a final status itself; otherwise the SDK publishes TASK_STATE_CANCELED once
   * both have settled.
   */
  cancelTask?(taskId: string, events: ExecutionEventBus): Promise<void>;
}
