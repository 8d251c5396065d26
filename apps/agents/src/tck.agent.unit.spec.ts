import type { Message, Task } from '@lib/a2a-protocol';
import { AGENT_PROFILES, type RequestContext } from '@lib/worker-sdk';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { recordingBus } from '../test/recording-bus';
import { scenarioFor, stepsFor, TCK_SCENARIOS, TckAgent } from './tck.agent';

// The agent waits with `setTimeout` of `node:timers/promises`, which `vi.useFakeTimers()` does not reach: the
// same wait on the global timer, which it does fake, settled the same way (the value, or the abort).
vi.mock('node:timers/promises', async (importOriginal) => ({
  ...(await importOriginal<typeof import('node:timers/promises')>()),
  setTimeout: <T>(ms: number, value: T, options: { signal?: AbortSignal } = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const { signal } = options;
      const abort = (): void => {
        clearTimeout(timer);
        reject(new DOMException('The operation was aborted', 'AbortError'));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', abort);
        resolve(value);
      }, ms);
      if (signal?.aborted) {
        abort();
      } else {
        signal?.addEventListener('abort', abort, { once: true });
      }
    }),
}));

/** A message id the way the TCK builds them: `<prefix>-<8 hex session>[-<transport>]`. */
const tckId = (prefix: string, transport?: string): string =>
  `${prefix}-1a2b3c4d${transport ? `-${transport}` : ''}`;

const user = (messageId: string, text = 'TCK prerequisite task creation'): Message => ({
  messageId,
  role: 'ROLE_USER',
  parts: [{ text }],
});

function contextOf(
  userMessage: Message,
  signal = new AbortController().signal,
  mayReply = true,
): RequestContext {
  const task: Task = {
    id: 't',
    contextId: 'c',
    status: { state: 'TASK_STATE_SUBMITTED' },
    history: [userMessage],
  };
  return { taskId: 't', contextId: 'c', userMessage, task, attempt: 1, signal, mayReply };
}

async function run(messageId: string, agent = new TckAgent(), mayReply = true): Promise<string[]> {
  const { bus, lines } = recordingBus();
  await agent.execute(contextOf(user(messageId), undefined, mayReply), bus);
  return lines;
}

const FILE_PART = '{"raw":"dGNr","filename":"output.txt","mediaType":"text/plain"}';

describe('tck agent: scenario selection', () => {
  it('has one scenario per prefix', () => {
    const prefixes = TCK_SCENARIOS.map((s) => s.prefix);
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });

  it.each(TCK_SCENARIOS.map((s) => s.prefix))(
    'selects %s by the TCK message id, with or without the transport suffix',
    (prefix) => {
      expect(scenarioFor(tckId(prefix))?.prefix).toBe(prefix);
      expect(scenarioFor(tckId(prefix, 'http_json'))?.prefix).toBe(prefix);
    },
  );

  it('prefers the longest matching prefix', () => {
    expect(scenarioFor('tck-artifact-file-url-1a2b3c4d')?.prefix).toBe('tck-artifact-file-url');
    expect(scenarioFor('tck-artifact-file-1a2b3c4d')?.prefix).toBe('tck-artifact-file');
    expect(scenarioFor('tck-stream-artifact-file-1a2b3c4d')?.prefix).toBe(
      'tck-stream-artifact-file',
    );
  });

  it.each(['dm-test-001', 'tck-transport-test-001-1a2b3c4d', 'TCK-COMPLETE-TASK-1', ''])(
    'matches no scenario for %j',
    (messageId) => {
      expect(scenarioFor(messageId)).toBeUndefined();
    },
  );

  it('echoes a message without a scenario', () => {
    expect(stepsFor(user('m-1', 'hello'))).toEqual([
      {
        kind: 'artifact',
        chunk: { artifactId: 'echo', name: 'echo', lastChunk: true, parts: [{ text: 'hello' }] },
      },
      { kind: 'complete', text: 'No TCK scenario has a prefix of messageId m-1.' },
    ]);
  });

  it('completes without an artifact when there is no text to echo', () => {
    const dataOnly: Message = { messageId: 'm-2', role: 'ROLE_USER', parts: [{ data: { a: 1 } }] };
    expect(stepsFor(dataOnly)).toEqual([
      { kind: 'complete', text: 'No TCK scenario has a prefix of messageId m-2.' },
    ]);
  });
});

/** What each scenario publishes, by prefix (`+` append, `!` last chunk). */
const PUBLISHED: ReadonlyArray<[string, string[]]> = [
  ['tck-complete-task', ['COMPLETED Hello from TCK']],
  ['tck-artifact-text', ['artifact tck-text! [{"text":"Generated text content"}]', 'COMPLETED']],
  ['tck-artifact-file', [`artifact tck-file! [${FILE_PART}]`, 'COMPLETED']],
  [
    'tck-artifact-file-url',
    [
      'artifact tck-file-url! [{"url":"https://example.com/output.txt","filename":"output.txt","mediaType":"text/plain"}]',
      'COMPLETED',
    ],
  ],
  ['tck-artifact-data', ['artifact tck-data! [{"data":{"key":"value","count":42}}]', 'COMPLETED']],
  ['tck-message-response', ['reply Direct message response']],
  ['tck-input-required', ['INPUT_REQUIRED The TCK scenario asks for more input.']],
  ['tck-reject-task', ['REJECTED rejected']],
  [
    'tck-stream-001',
    ['WORKING', 'artifact tck-stream! [{"text":"Stream hello from TCK"}]', 'COMPLETED'],
  ],
  ['tck-stream-002', ['COMPLETED']],
  [
    'tck-stream-003',
    ['WORKING', 'artifact tck-stream! [{"text":"Stream task lifecycle"}]', 'COMPLETED'],
  ],
  [
    'tck-stream-ordering-001',
    ['WORKING', 'artifact tck-stream! [{"text":"Ordered output"}]', 'COMPLETED'],
  ],
  [
    'tck-stream-artifact-text',
    ['WORKING', 'artifact tck-text! [{"text":"Streamed text content"}]', 'COMPLETED'],
  ],
  ['tck-stream-artifact-file', ['WORKING', `artifact tck-file! [${FILE_PART}]`, 'COMPLETED']],
  [
    'tck-stream-artifact-chunked',
    [
      'WORKING',
      'artifact tck-chunked [{"text":"chunk-1 "}]',
      'artifact tck-chunked+! [{"text":"chunk-2"}]',
      'COMPLETED',
    ],
  ],
  ['test-resubscribe-message-id', ['WORKING', 'COMPLETED']],
];

describe('tck agent: what each scenario publishes', () => {
  it('has an expectation for every scenario', () => {
    expect(PUBLISHED.map(([prefix]) => prefix).sort()).toEqual(
      TCK_SCENARIOS.map((s) => s.prefix).sort(),
    );
  });

  it.each(PUBLISHED)('%s', async (prefix, lines) => {
    expect(await run(tckId(prefix), new TckAgent({ streamingTimeoutMs: 1 }))).toEqual(lines);
  });

  it('answers the direct-message scenario on a task (no reply possible) with a message, then completes', async () => {
    expect(await run(tckId('tck-message-response'), new TckAgent(), false)).toEqual([
      'message Direct message response',
      'COMPLETED',
    ]);
  });

  it('echoes a message without a scenario, then completes', async () => {
    expect(await run('tck-transport-test-001-1a2b3c4d')).toEqual([
      'artifact echo! [{"text":"TCK prerequisite task creation"}]',
      'COMPLETED No TCK scenario has a prefix of messageId tck-transport-test-001-1a2b3c4d.',
    ]);
  });
});

describe('tck agent: the wait of test-resubscribe', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps the task WORKING for two streaming timeouts (docs/SUT_REQUIREMENTS)', async () => {
    const { bus, lines } = recordingBus();
    const running = new TckAgent({ streamingTimeoutMs: 40 }).execute(
      contextOf(user(tckId('test-resubscribe-message-id'))),
      bus,
    );
    await vi.advanceTimersByTimeAsync(79);
    expect(lines).toEqual(['WORKING']);
    await vi.advanceTimersByTimeAsync(1);
    expect(lines).toEqual(['WORKING', 'COMPLETED']);
    await running;
  });

  it('stops waiting when the task is cancelled', async () => {
    const { bus, lines } = recordingBus();
    const controller = new AbortController();
    const running = new TckAgent({ streamingTimeoutMs: 10_000 }).execute(
      contextOf(user(tckId('test-resubscribe-message-id')), controller.signal),
      bus,
    );
    await vi.advanceTimersByTimeAsync(0);
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(lines).toEqual(['WORKING']);
  });
});

describe('tck agent: profile and docs', () => {
  it('declares its skills for the card', () => {
    const profile = AGENT_PROFILES.tck;
    expect(profile.skills.map((s) => s.id)).toEqual([
      'tck-tasks',
      'tck-message-response',
      'tck-artifacts',
      'tck-streaming',
      'echo',
    ]);
    for (const skill of profile.skills) {
      expect(skill.name && skill.description && skill.tags.length).toBeTruthy();
    }
    // The direct-message scenario answers with a bare Message.
    expect(profile.messageReplies).toBe(true);
  });

  it('docs/conformance.md lists every scenario prefix', () => {
    const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'conformance.md'), 'utf8');
    for (const { prefix } of TCK_SCENARIOS) {
      expect(doc).toContain(`| \`${prefix}\``);
    }
  });
});
