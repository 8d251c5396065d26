import type { JsonValue, Message, Part, Task } from '@lib/a2a-protocol';
import { loadA2uiSchemas } from '@lib/testing';
import {
  A2UI_BASIC_CATALOG_ID,
  A2UI_EXTENSION_URIS,
  isA2uiPart,
  type ExecutionUpdate,
  type RequestContext,
} from '@lib/worker-sdk';
import { describe, expect, it } from 'vitest';
import { recordingBus } from '../test/recording-bus';
import {
  draftFromMessage,
  ExpenseAgent,
  FORM_TEXT,
  formSurfaceId,
  SUBMIT_ACTION,
  validateExpense,
} from './expense.agent';

const TODAY = '2026-12-03';
const schemas = loadA2uiSchemas();
const V09 = A2UI_EXTENSION_URIS['v0.9'];

const VALID = {
  description: 'Taxi to the airport',
  amount: '42.50',
  currency: ['EUR'],
  date: '2026-11-30',
  category: ['travel'],
};

let ids = 0;
const user = (parts: Part[], extra: Partial<Message> = {}): Message => ({
  messageId: `u${++ids}`,
  role: 'ROLE_USER',
  parts,
  ...extra,
});
const submit = (context: Record<string, JsonValue>, extensions = [V09]): Message =>
  user(
    [
      {
        data: [
          {
            version: 'v0.9',
            action: {
              name: SUBMIT_ACTION,
              surfaceId: formSurfaceId('t'),
              sourceComponentId: 'submit',
              timestamp: '2026-12-03T10:00:00Z',
              context,
            },
          },
        ],
        mediaType: 'application/json+a2ui',
      },
    ],
    { extensions },
  );

/** Runs one assignment of the agent on a task whose history is `history` plus the new message. */
async function run(message: Message, history: Message[] = []): Promise<ExecutionUpdate[]> {
  const task: Task = {
    id: 't',
    contextId: 'c',
    status: { state: history.length > 0 ? 'TASK_STATE_INPUT_REQUIRED' : 'TASK_STATE_WORKING' },
    history: [...history, message],
  };
  const context: RequestContext = {
    taskId: 't',
    contextId: 'c',
    userMessage: message,
    task,
    attempt: 1,
    mayReply: false,
    signal: new AbortController().signal,
  };
  const { bus, updates } = recordingBus();
  await new ExpenseAgent(() => TODAY).execute(context, bus);
  return updates;
}

function statusOf(update: ExecutionUpdate | undefined): { state: string; message: Message } {
  if (update?.kind !== 'status' || !update.status.message) {
    throw new Error(`expected a status with a message, got ${JSON.stringify(update)}`);
  }
  return { state: update.status.state, message: update.status.message };
}

/** The A2UI messages of the parts, after checking them against server_to_client_list.json. */
function a2uiMessages(parts: Part[]): Record<string, unknown>[] {
  const a2ui = parts.filter(isA2uiPart);
  expect(a2ui).toHaveLength(1);
  expect(schemas.errors('server_to_client_list', a2ui[0]?.data)).toEqual([]);
  return a2ui[0]?.data as Record<string, unknown>[];
}

describe('validateExpense', () => {
  const draft = {
    description: 'Taxi',
    amount: '42.50',
    currency: 'eur',
    date: '2026-11-30',
    category: 'Travel',
  };

  it('accepts a complete claim and normalises it', () => {
    expect(validateExpense(draft, TODAY)).toEqual({
      ok: true,
      expense: {
        description: 'Taxi',
        amount: 42.5,
        currency: 'EUR',
        date: '2026-11-30',
        category: 'travel',
      },
    });
  });

  it('names every wrong or missing field', () => {
    const checked = validateExpense(
      { description: 'x', amount: '-3', currency: 'JPY', date: '2026-02-30' },
      TODAY,
    );
    expect(checked.ok).toBe(false);
    expect(Object.keys(checked.ok ? {} : checked.errors).sort()).toEqual([
      'amount',
      'category',
      'currency',
      'date',
      'description',
    ]);
    const future = validateExpense({ ...draft, date: '2026-12-04', amount: '10001' }, TODAY);
    expect(future.ok ? {} : future.errors).toEqual({
      date: 'The date cannot be in the future.',
      amount: 'The amount must be more than 0 and at most 10000.',
    });
  });
});

describe('draftFromMessage', () => {
  it('reads the submit action, a JSON DataPart or field lines', () => {
    expect(draftFromMessage(submit(VALID))).toEqual({
      ...VALID,
      currency: 'EUR',
      category: 'travel',
    });
    expect(draftFromMessage(user([{ data: { amount: 12, currency: 'USD' } }]))).toEqual({
      amount: '12',
      currency: 'USD',
    });
    expect(
      draftFromMessage(user([{ text: 'Amount: 12.00\ncurrency = gbp\nhello: there\nno field' }])),
    ).toEqual({ amount: '12.00', currency: 'gbp' });
    expect(draftFromMessage(user([{ text: 'File an expense' }]))).toEqual({});
  });
});

describe('expense agent with A2UI', () => {
  it('opens the form: INPUT_REQUIRED with a text and the A2UI surface (schema-valid)', async () => {
    const [update, ...rest] = await run(user([{ text: 'File an expense' }], { extensions: [V09] }));
    expect(rest).toEqual([]);
    const { state, message } = statusOf(update);
    expect(state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(message.extensions).toEqual([V09]);
    expect(message.parts[0]).toEqual({ text: FORM_TEXT });
    expect(message.parts[1]?.mediaType).toBe('application/json+a2ui');
    const messages = a2uiMessages(message.parts);
    expect(messages.map((m) => Object.keys(m)[1])).toEqual([
      'createSurface',
      'updateComponents',
      'updateDataModel',
    ]);
    expect(messages[0]).toEqual({
      version: 'v0.9',
      createSurface: { surfaceId: 'expense-form-t', catalogId: A2UI_BASIC_CATALOG_ID },
    });
  });

  it('answers in v0.9.1 (its media type) when the client activated that version', async () => {
    const [update] = await run(
      user([{ text: 'File an expense' }], { extensions: [A2UI_EXTENSION_URIS['v0.9.1']] }),
    );
    expect(statusOf(update).message.parts[1]?.mediaType).toBe('application/a2ui+json');
  });

  it('shows wrong fields as a data-model update of the same surface and stays INPUT_REQUIRED', async () => {
    const [form] = await run(user([{ text: 'File an expense' }], { extensions: [V09] }));
    const asked = statusOf(form).message;
    const [update] = await run(submit({ ...VALID, amount: 'lots', date: '2027-01-01' }), [asked]);
    const { state, message } = statusOf(update);
    expect(state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(message.parts[0]?.text).toContain('Please correct the 2 fields');
    const [only, ...more] = a2uiMessages(message.parts);
    expect(more).toEqual([]);
    expect(only).toMatchObject({
      updateDataModel: {
        surfaceId: 'expense-form-t',
        value: {
          expense: { amount: 'lots', currency: ['EUR'] },
          errors: {
            amount: 'Enter an amount such as 42.50.',
            date: 'The date cannot be in the future.',
            description: '',
          },
          status: 'Please correct the 2 fields marked below.',
        },
      },
    });
  });

  it('files a valid claim: the artifact (text, JSON, summary card), then COMPLETED removing the form', async () => {
    const [form] = await run(user([{ text: 'File an expense' }], { extensions: [V09] }));
    const [artifact, completed, ...rest] = await run(submit(VALID), [statusOf(form).message]);
    expect(rest).toEqual([]);
    if (artifact?.kind !== 'artifact') {
      throw new Error('expected the artifact first');
    }
    expect(artifact.artifact.artifactId).toBe('expense');
    expect(artifact.artifact.extensions).toEqual([V09]);
    const [text, json] = artifact.artifact.parts;
    expect(text?.text).toMatch(
      /^Expense EXP-\w+ filed: Taxi to the airport, 42.50 EUR on 2026-11-30/,
    );
    expect(json).toEqual({
      data: {
        reference: expect.stringMatching(/^EXP-/) as unknown as string,
        description: 'Taxi to the airport',
        amount: 42.5,
        currency: 'EUR',
        date: '2026-11-30',
        category: 'travel',
      },
      mediaType: 'application/json',
    });
    expect(a2uiMessages(artifact.artifact.parts).map((m) => Object.keys(m)[1])).toEqual([
      'createSurface',
      'updateComponents',
      'updateDataModel',
    ]);
    const { state, message } = statusOf(completed);
    expect(state).toBe('TASK_STATE_COMPLETED');
    expect(a2uiMessages(message.parts)).toEqual([
      { version: 'v0.9', deleteSurface: { surfaceId: 'expense-form-t' } },
    ]);
  });

  it('falls back to text when the client cannot render the basic catalog', async () => {
    const message = user([{ text: 'File an expense' }], {
      extensions: [V09],
      metadata: { a2uiClientCapabilities: { 'v0.9': { supportedCatalogIds: ['other'] } } },
    });
    const [update] = await run(message);
    expect(statusOf(update).message.parts).toEqual([{ text: FORM_TEXT }]);
  });
});

describe('expense agent without A2UI', () => {
  it('asks in text, names the wrong lines, keeps earlier lines and completes', async () => {
    const first = user([{ text: 'File an expense' }]);
    const [ask] = await run(first);
    expect(statusOf(ask)).toMatchObject({
      state: 'TASK_STATE_INPUT_REQUIRED',
      message: { parts: [{ text: FORM_TEXT }] },
    });
    const lines = user([
      {
        text: 'description: Taxi\namount: 42,50\ncurrency: EUR\ndate: 2026-11-30\ncategory: travel',
      },
    ]);
    const [wrong] = await run(lines, [first, statusOf(ask).message]);
    expect(statusOf(wrong).message.parts).toEqual([
      { text: 'Please correct the field marked below.\n- Amount: Enter an amount such as 42.50.' },
    ]);
    const fix = user([{ text: 'amount: 42.50' }]);
    const [artifact, completed] = await run(fix, [
      first,
      statusOf(ask).message,
      lines,
      statusOf(wrong).message,
    ]);
    expect(artifact?.kind === 'artifact' && artifact.artifact.parts.some(isA2uiPart)).toBe(false);
    expect(artifact?.kind === 'artifact' && artifact.artifact.parts.length).toBe(2);
    expect(statusOf(completed).state).toBe('TASK_STATE_COMPLETED');
    expect(statusOf(completed).message.parts[0]?.text).toMatch(/42.50 EUR/);
  });
});
