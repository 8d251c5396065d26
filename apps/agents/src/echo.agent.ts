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
    // Produced together, so published together: one update, one append.
    await Promise.all([
      events.working(),
      events.artifact({
        artifactId: 'echo',
        name: 'echo',
        parts: [textPart(joinedText(context.userMessage))],
        lastChunk: true,
      }),
      events.complete(),
    ]);
  }
}
