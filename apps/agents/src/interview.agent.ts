import type { Message, Task } from '@lib/a2a-protocol';
import {
  textPart,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@lib/worker-sdk';
import { joinedText } from './message-text';

export const INTERVIEW_QUESTION = 'What is your name?';

export function greeting(name: string): string {
  return `Nice to meet you, ${name}!`;
}

export type InterviewStep = { kind: 'ask' } | { kind: 'greet'; text: string };

/** Ask first; once the question is in the task and the user answered it, greet them. */
export function nextInterviewStep(task: Task, userMessage: Message): InterviewStep {
  const seen = [...(task.history ?? []), ...(task.status.message ? [task.status.message] : [])];
  const asked = seen.some((m) => m.role === 'ROLE_AGENT' && joinedText(m) === INTERVIEW_QUESTION);
  const answer = joinedText(userMessage).trim();
  return asked && answer !== '' ? { kind: 'greet', text: greeting(answer) } : { kind: 'ask' };
}

/** Agent `interview`: a two-turn task through TASK_STATE_INPUT_REQUIRED. */
export class InterviewAgent implements AgentExecutor {
  async execute(context: RequestContext, events: ExecutionEventBus): Promise<void> {
    const step = nextInterviewStep(context.task, context.userMessage);
    if (step.kind === 'ask') {
      await events.inputRequired(INTERVIEW_QUESTION);
      return;
    }
    await events.artifact({
      artifactId: 'greeting',
      name: 'greeting',
      parts: [textPart(step.text)],
      lastChunk: true,
    });
    await events.complete();
  }
}
