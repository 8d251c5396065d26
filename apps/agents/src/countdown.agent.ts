import type { JsonObject } from '@lib/a2a-protocol';
import {
  textPart,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@lib/worker-sdk';
import { setTimeout as delay } from 'node:timers/promises';
import { joinedText } from './message-text';

export const DEFAULT_COUNT = 5;
export const DEFAULT_STEP_MS = 1_000;

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** N: the first integer in the text, 1..100; 5 when there is none. */
export function parseCount(text: string): number {
  const match = /-?\d+/.exec(text);
  return match ? clamp(Number.parseInt(match[0], 10), 1, 100) : DEFAULT_COUNT;
}

/** The step delay: the message metadata's integer `stepMs`, 10..10 000; 1 000 ms when absent or not an integer. */
export function parseStepMs(metadata: JsonObject | undefined): number {
  const stepMs = metadata?.['stepMs'];
  return typeof stepMs === 'number' && Number.isInteger(stepMs)
    ? clamp(stepMs, 10, 10_000)
    : DEFAULT_STEP_MS;
}

/**
 * Agent `countdown`: one step per `stepMs`, each with a WORKING status `step i/N` and one chunk of the
 * artifact `countdown` (N, N-1, … 1). A cancel aborts the wait between steps; the SDK then publishes
 * TASK_STATE_CANCELED.
 */
export class CountdownAgent implements AgentExecutor {
  async execute(context: RequestContext, events: ExecutionEventBus): Promise<void> {
    const count = parseCount(joinedText(context.userMessage));
    const stepMs = parseStepMs(context.userMessage.metadata);
    for (let step = 1; step <= count; step++) {
      await events.working(`step ${step}/${count}`);
      await delay(stepMs, undefined, { signal: context.signal });
      await events.artifact({
        artifactId: 'countdown',
        name: 'countdown',
        parts: [textPart(String(count - step + 1))],
        append: step > 1,
        lastChunk: step === count,
      });
    }
    await events.complete(`Counted down from ${count}.`);
  }
}
