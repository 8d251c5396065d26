import {
  textPart,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@lib/worker-sdk';
import { joinedText } from './message-text';

/** Agent `echo`: sends the user's text back as the artifact `echo`. */
export class EchoAgent implements AgentExecutor {
  async execute(context: RequestContext, events: ExecutionEventBus): Promise<void> {
    await events.working();
    await events.artifact({
      artifactId: 'echo',
      name: 'echo',
      parts: [textPart(joinedText(context.userMessage))],
      lastChunk: true,
    });
    await events.complete();
  }
}
