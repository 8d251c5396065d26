import type { Message, Task } from '@lib/a2a-protocol';
import type { RequestContext } from '@lib/worker-sdk';
import { describe, expect, it } from 'vitest';
import { recordingBus as recordBus } from '../test/recording-bus';
import { CountdownAgent, parseCount, parseStepMs } from './countdown.agent';
import { EchoAgent } from './echo.agent';
import { greeting, INTERVIEW_QUESTION, InterviewAgent, nextInterviewStep } from './interview.agent';
import { joinedText } from './message-text';

const user = (text: string, metadata?: Message['metadata']): Message => ({
  messageId: `u-${text}`,
  role: 'ROLE_USER',
  parts: [{ text }],
  ...(metadata ? { metadata } : {}),
});
const agent = (text: string): Message => ({
  messageId: `a-${text}`,
  role: 'ROLE_AGENT',
  parts: [{ text }],
});

function contextOf(userMessage: Message, history: Message[] = [userMessage]): RequestContext {
  const task: Task = { id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' }, history };
  return {
    taskId: 't',
    contextId: 'c',
    userMessage,
    task,
    attempt: 1,
    // None of these agents declares `messageReplies`.
    mayReply: false,
    signal: new AbortController().signal,
  };
}

/** Records what an agent publishes, as short lines; an artifact's parts as their joined text. */
const recordingBus = () =>
  recordBus((artifact) => ` ${joinedText({ ...agent(''), parts: artifact.parts })}`);

describe('joinedText', () => {
  it("joins a message's text parts with newlines and skips other parts", () => {
    const message: Message = {
      messageId: 'm',
      role: 'ROLE_USER',
      parts: [{ text: 'one' }, { data: { n: 1 } }, { text: 'two' }, { url: 'https://example.com' }],
    };
    expect(joinedText(message)).toBe('one\ntwo');
    expect(joinedText({ ...message, parts: [] })).toBe('');
  });
});

describe('echo agent', () => {
  it('reports WORKING, echoes the text as the artifact "echo", then completes', async () => {
    const { bus, lines } = recordingBus();
    const message: Message = {
      messageId: 'm',
      role: 'ROLE_USER',
      parts: [{ text: 'hello' }, { text: 'world' }],
    };
    await new EchoAgent().execute(contextOf(message), bus);
    expect(lines).toEqual(['WORKING', 'artifact echo! hello\nworld', 'COMPLETED']);
  });
});

describe('interview agent', () => {
  it('greets by name', () => {
    expect(greeting('Ada')).toBe('Nice to meet you, Ada!');
  });

  it('asks on the first message', () => {
    const first = user('hi');
    expect(nextInterviewStep(contextOf(first).task, first)).toEqual({ kind: 'ask' });
  });

  it('greets once the question was asked and answered', () => {
    const answer = user('  Ada Lovelace ');
    const { task } = contextOf(answer, [user('hi'), agent(INTERVIEW_QUESTION), answer]);
    expect(nextInterviewStep(task, answer)).toEqual({
      kind: 'greet',
      text: 'Nice to meet you, Ada Lovelace!',
    });
  });

  it('asks again when the answer is empty', () => {
    const answer = user(' ');
    const { task } = contextOf(answer, [user('hi'), agent(INTERVIEW_QUESTION), answer]);
    expect(nextInterviewStep(task, answer)).toEqual({ kind: 'ask' });
  });

  it('runs the two turns through INPUT_REQUIRED', async () => {
    const first = recordingBus();
    await new InterviewAgent().execute(contextOf(user('hi')), first.bus);
    expect(first.lines).toEqual(['INPUT_REQUIRED What is your name?']);

    const second = recordingBus();
    const answer = user('Ada');
    await new InterviewAgent().execute(
      contextOf(answer, [user('hi'), agent(INTERVIEW_QUESTION), answer]),
      second.bus,
    );
    expect(second.lines).toEqual(['artifact greeting! Nice to meet you, Ada!', 'COMPLETED']);
  });
});

describe('countdown agent', () => {
  it.each([
    ['', 5],
    ['count down please', 5],
    ['3', 3],
    ['from 12 to zero', 12],
    ['0', 1],
    ['-7', 1],
    ['100', 100],
    ['1000', 100],
    ['2.9', 2],
  ])('reads N from %j as %i', (text, count) => {
    expect(parseCount(text)).toBe(count);
  });

  it.each([
    [undefined, 1_000],
    [{}, 1_000],
    [{ stepMs: 250 }, 250],
    [{ stepMs: 1 }, 10],
    [{ stepMs: 60_000 }, 10_000],
    [{ stepMs: 12.5 }, 1_000],
    [{ stepMs: '50' }, 1_000],
  ])('reads the step delay from %j as %i ms', (metadata, stepMs) => {
    expect(parseStepMs(metadata)).toBe(stepMs);
  });

  it('reports each step and streams the artifact in chunks', async () => {
    const { bus, lines } = recordingBus();
    await new CountdownAgent().execute(contextOf(user('3', { stepMs: 10 })), bus);
    expect(lines).toEqual([
      'WORKING step 1/3',
      'artifact countdown 3',
      'WORKING step 2/3',
      'artifact countdown+ 2',
      'WORKING step 3/3',
      'artifact countdown+! 1',
      'COMPLETED Counted down from 3.',
    ]);
  });

  it('stops waiting when its signal aborts', async () => {
    const { bus, lines } = recordingBus();
    const controller = new AbortController();
    const context = { ...contextOf(user('100', { stepMs: 10_000 })), signal: controller.signal };
    const running = new CountdownAgent().execute(context, bus);
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(lines).toEqual(['WORKING step 1/100']);
  });
});
