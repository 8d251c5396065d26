import type { VersionedTaskEvent } from '@lib/event-store';
import type { TaskRef } from '@lib/tenancy';

/** Told the events of one task change committed in this process, in generation order. */
export type LocalCommitListener = (task: TaskRef, events: readonly VersionedTaskEvent[]) => void;

/**
 * Task changes committed by a task-service running in this process (the standalone): the feed hands their
 * events to the task's subscribers without reading them back from the log. A separate ingress process has
 * none and reads the log on every notice, as before (ADR 0008).
 */
export abstract class LocalCommits {
  abstract subscribe(listener: LocalCommitListener): () => void;

  /**
   * When a change to the task is being committed in this process: the end of that commit, its listeners
   * told. A notice of the commit can arrive before its result; waiting for it spares the feed a read.
   */
  abstract settling(task: TaskRef): Promise<void> | undefined;

  /**
   * The task's newest generation as this process knows it, when it knows it: what it committed itself, kept
   * until a notice says the stream moved past it elsewhere; undefined when it does not know (it then reads).
   */
  abstract version(task: TaskRef): number | undefined;
}
