import type { Message } from '@lib/a2a-protocol';
import {
  textPart,
  type AgentExecutor,
  type ArtifactChunk,
  type ExecutionEventBus,
  type RequestContext,
} from '@lib/worker-sdk';
import { setTimeout as delay } from 'node:timers/promises';
import { joinedText } from './message-text';

/** The TCK's default `TCK_STREAMING_TIMEOUT` (2 s). */
export const DEFAULT_STREAMING_TIMEOUT_MS = 2_000;

/** One thing a scenario does, in order. */
export type TckStep =
  | { readonly kind: 'working' }
  | { readonly kind: 'artifact'; readonly chunk: ArtifactChunk }
  /**
   * A bare Message answering the client's message instead of a task. When the message cannot be answered
   * that way (it continues a task), the text joins the task as an agent message and the task completes.
   */
  | { readonly kind: 'reply'; readonly text: string }
  /** Keeps the task running for this many TCK streaming timeouts; a cancel cuts it short. */
  | { readonly kind: 'wait'; readonly streamingTimeouts: number }
  | { readonly kind: 'complete'; readonly text?: string }
  | { readonly kind: 'input-required'; readonly text: string }
  | { readonly kind: 'reject'; readonly text: string };

/**
 * A behaviour of the TCK's system under test (`a2aproject/a2a-tck`, branch `1.0-dev`, `scenarios/*.feature`),
 * selected by the prefix of the user message's `messageId`. The TCK sends `<prefix>-<session>` and sometimes
 * `<prefix>-<session>-<transport>`, for unary and streaming calls alike: the agent cannot tell them apart and
 * does not need to.
 */
export interface TckScenario {
  readonly prefix: string;
  readonly steps: readonly TckStep[];
}

const FILE_NAME = 'output.txt';
const FILE_MEDIA_TYPE = 'text/plain';
/** The bytes `tck` (base64), the content of the generated SUTs' inline file. */
const FILE_BYTES = 'dGNr';

const WORKING: TckStep = { kind: 'working' };
const COMPLETE: TckStep = { kind: 'complete' };

function artifact(artifactId: string, chunk: Omit<ArtifactChunk, 'artifactId'>): TckStep {
  return { kind: 'artifact', chunk: { artifactId, name: artifactId, lastChunk: true, ...chunk } };
}

function textArtifact(artifactId: string, text: string): TckStep {
  return artifact(artifactId, { parts: [textPart(text)] });
}

function fileArtifact(artifactId: string): TckStep {
  return artifact(artifactId, {
    parts: [{ raw: FILE_BYTES, filename: FILE_NAME, mediaType: FILE_MEDIA_TYPE }],
  });
}

/** Every scenario of the TCK's `scenarios/core_operations.feature` and `scenarios/streaming.feature`. */
export const TCK_SCENARIOS: readonly TckScenario[] = [
  { prefix: 'tck-complete-task', steps: [{ kind: 'complete', text: 'Hello from TCK' }] },
  {
    prefix: 'tck-artifact-text',
    steps: [textArtifact('tck-text', 'Generated text content'), COMPLETE],
  },
  { prefix: 'tck-artifact-file', steps: [fileArtifact('tck-file'), COMPLETE] },
  {
    prefix: 'tck-artifact-file-url',
    steps: [
      artifact('tck-file-url', {
        parts: [
          {
            url: 'https://example.com/output.txt',
            filename: FILE_NAME,
            mediaType: FILE_MEDIA_TYPE,
          },
        ],
      }),
      COMPLETE,
    ],
  },
  {
    prefix: 'tck-artifact-data',
    steps: [artifact('tck-data', { parts: [{ data: { key: 'value', count: 42 } }] }), COMPLETE],
  },
  {
    prefix: 'tck-message-response',
    steps: [{ kind: 'reply', text: 'Direct message response' }],
  },
  {
    prefix: 'tck-input-required',
    steps: [{ kind: 'input-required', text: 'The TCK scenario asks for more input.' }],
  },
  { prefix: 'tck-reject-task', steps: [{ kind: 'reject', text: 'rejected' }] },
  {
    prefix: 'tck-stream-001',
    steps: [WORKING, textArtifact('tck-stream', 'Stream hello from TCK'), COMPLETE],
  },
  { prefix: 'tck-stream-002', steps: [COMPLETE] },
  {
    prefix: 'tck-stream-003',
    steps: [WORKING, textArtifact('tck-stream', 'Stream task lifecycle'), COMPLETE],
  },
  {
    prefix: 'tck-stream-ordering-001',
    steps: [WORKING, textArtifact('tck-stream', 'Ordered output'), COMPLETE],
  },
  {
    prefix: 'tck-stream-artifact-text',
    steps: [WORKING, textArtifact('tck-text', 'Streamed text content'), COMPLETE],
  },
  { prefix: 'tck-stream-artifact-file', steps: [WORKING, fileArtifact('tck-file'), COMPLETE] },
  {
    prefix: 'tck-stream-artifact-chunked',
    steps: [
      WORKING,
      // The first chunk creates the artifact: appending to an artifact that does not exist is refused.
      artifact('tck-chunked', { parts: [textPart('chunk-1 ')], lastChunk: false }),
      artifact('tck-chunked', { parts: [textPart('chunk-2')], append: true, lastChunk: true }),
      COMPLETE,
    ],
  },
  {
    prefix: 'test-resubscribe-message-id',
    steps: [WORKING, { kind: 'wait', streamingTimeouts: 2 }, COMPLETE],
  },
];

const BY_LONGEST_PREFIX = [...TCK_SCENARIOS].sort((a, b) => b.prefix.length - a.prefix.length);

/** The scenario a `messageId` selects: the longest matching prefix wins (`tck-artifact-file-url`). */
export function scenarioFor(messageId: string): TckScenario | undefined {
  return BY_LONGEST_PREFIX.find((scenario) => messageId.startsWith(scenario.prefix));
}

/** Any other message: its text comes back as the artifact `echo` and the task completes. */
export function echoSteps(message: Message): TckStep[] {
  const text = joinedText(message);
  return [
    ...(text === '' ? [] : [textArtifact('echo', text)]),
    { kind: 'complete', text: `No TCK scenario has a prefix of messageId ${message.messageId}.` },
  ];
}

/** What the agent does for a user message. */
export function stepsFor(message: Message): readonly TckStep[] {
  return scenarioFor(message.messageId)?.steps ?? echoSteps(message);
}

export interface TckAgentOptions {
  /** The TCK's `TCK_STREAMING_TIMEOUT` in ms; a `wait` step lasts a multiple of it. Default 2 000. */
  readonly streamingTimeoutMs?: number;
}

/**
 * Agent `tck`: the system under test for the A2A TCK. Each user message runs the scenario its `messageId`
 * prefix selects (see `docs/conformance.md`); other messages are echoed. A cancel aborts a `wait`; the SDK
 * then publishes TASK_STATE_CANCELED.
 */
export class TckAgent implements AgentExecutor {
  private readonly streamingTimeoutMs: number;

  constructor(options: TckAgentOptions = {}) {
    this.streamingTimeoutMs = options.streamingTimeoutMs ?? DEFAULT_STREAMING_TIMEOUT_MS;
  }

  async execute(context: RequestContext, events: ExecutionEventBus): Promise<void> {
    for (const step of stepsFor(context.userMessage)) {
      await this.perform(step, context, events);
    }
  }

  private async perform(
    step: TckStep,
    { signal, mayReply }: RequestContext,
    events: ExecutionEventBus,
  ): Promise<void> {
    switch (step.kind) {
      case 'working':
        return events.working();
      case 'artifact':
        await events.artifact(step.chunk);
        return;
      case 'reply':
        if (mayReply) {
          return events.reply(step.text);
        }
        await events.message([textPart(step.text)]);
        return events.complete();
      case 'wait':
        return delay(step.streamingTimeouts * this.streamingTimeoutMs, undefined, { signal });
      case 'complete':
        return events.complete(step.text);
      case 'input-required':
        return events.inputRequired(step.text);
      case 'reject':
        return events.status('TASK_STATE_REJECTED', step.text);
    }
  }
}
