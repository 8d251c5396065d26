/**
 * A2UI on the platform (docs/a2ui.md), against the built platform (`npm start` with the demo tenant): the
 * example agent `expense` declares the A2UI extension on its card; a client that activates it (with the
 * `X-A2A-Extensions` header A2UI clients send, or `A2A-Extensions`) gets the form as A2UI DataParts in the
 * INPUT_REQUIRED status update, its errors as a data-model update, and the filed expense as an artifact; the
 * A2UI parts are ordinary task events in the Postgres log. A client without the extension gets text.
 */
import type { Artifact, JsonObject, Message, Part, StreamResponse, Task } from '@lib/a2a-protocol';
import { loadA2uiSchemas } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRpc, request, taskResult } from './support/json-rpc';
import { bootStandalone, taskEvents, type Standalone } from './support/platform';
import { rest, restBaseUrl, restResult } from './support/rest';
import { openSse, resultOf } from './support/sse';
import { splitList } from './support/wire';

const TENANT = 'demo';
const AGENT = 'expense';
const V09 = 'https://a2ui.org/a2a-extension/a2ui/v0.9';
const V091 = 'https://a2ui.org/a2a-extension/a2ui/v0.9.1';
const BASIC_CATALOG = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';
const A2UI_V09 = 'application/json+a2ui';
const CAPABILITIES = { 'v0.9': { supportedCatalogIds: [BASIC_CATALOG] } };
const schemas = loadA2uiSchemas();

let platform: Standalone;
let endpoint: string;

beforeAll(async () => {
  platform = await bootStandalone('a2ui');
  endpoint = platform.endpoint(TENANT, AGENT);
});

afterAll(async () => {
  await platform?.close();
});

/** One SendStreamingMessage turn: the response headers and every StreamResponse until the stream ends. */
async function turn(
  message: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ headers: Headers; responses: StreamResponse[] }> {
  const stream = await openSse(endpoint, request('SendStreamingMessage', { message }), { headers });
  expect(stream.isEventStream, `${stream.status} ${stream.contentType}`).toBe(true);
  const frames = await stream.collect();
  return { headers: stream.headers, responses: frames.map(resultOf) };
}

function userMessage(parts: Part[], task?: Task): Record<string, unknown> {
  return {
    messageId: `a2ui-${randomUUID()}`,
    role: 'ROLE_USER',
    parts,
    ...(task ? { taskId: task.id, contextId: task.contextId } : {}),
    metadata: { a2uiClientCapabilities: CAPABILITIES },
  };
}

/** The A2A message of a form submission: one A2UI DataPart with the `action` (docs/a2ui.md). */
function submission(task: Task, context: JsonObject): Record<string, unknown> {
  const action = {
    version: 'v0.9',
    action: {
      name: 'submit_expense',
      surfaceId: `expense-form-${task.id}`,
      sourceComponentId: 'submit',
      timestamp: new Date().toISOString(),
      context,
    },
  };
  expect(schemas.errors('client_to_server_list', [action])).toEqual([]);
  return userMessage([{ data: [action], mediaType: A2UI_V09 }], task);
}

function taskOf(responses: StreamResponse[]): Task {
  const first = responses[0];
  if (!first || !('task' in first)) {
    throw new Error(`the stream did not start with the task: ${JSON.stringify(responses)}`);
  }
  return first.task;
}

function lastStatus(responses: StreamResponse[]): { state: string; message?: Message } {
  const statuses = responses.flatMap((r) =>
    'statusUpdate' in r ? [r.statusUpdate.status] : 'task' in r ? [r.task.status] : [],
  );
  const last = statuses.at(-1);
  if (!last) {
    throw new Error(`no status in ${JSON.stringify(responses)}`);
  }
  return last;
}

/** The A2UI messages of the parts' one A2UI DataPart, checked against server_to_client_list.json. */
function a2uiOf(parts: readonly Part[], mediaType = A2UI_V09): Record<string, unknown>[] {
  const a2ui = parts.filter((p) => p.mediaType === mediaType);
  expect(a2ui, JSON.stringify(parts)).toHaveLength(1);
  expect(schemas.errors('server_to_client_list', a2ui[0]?.data)).toEqual([]);
  return a2ui[0]?.data as Record<string, unknown>[];
}

const VALID = {
  description: 'Taxi to the airport',
  amount: '42.50',
  currency: ['EUR'],
  date: '2026-11-30',
  category: ['travel'],
};

describe('A2UI (docs/a2ui.md)', () => {
  it("the agent's card declares the A2UI extension, v0.9 and v0.9.1, with the basic catalog", async () => {
    const response = await fetch(
      `${platform.baseUrl}/agents/${TENANT}/${AGENT}/.well-known/agent-card.json`,
    );
    expect(response.status).toBe(200);
    const card = (await response.json()) as {
      capabilities: { extensions: { uri: string; required?: boolean; params?: unknown }[] };
    };
    const a2ui = card.capabilities.extensions.filter((e) => e.uri.startsWith('https://a2ui.org/'));
    // Not required (ProtoJSON leaves the default `false` out).
    expect(a2ui.map((e) => [e.uri, e.required ?? false, e.params])).toEqual([
      [V09, false, { supportedCatalogIds: [BASIC_CATALOG] }],
      [V091, false, { supportedCatalogIds: [BASIC_CATALOG] }],
    ]);
    expect(schemas.errors('server_capabilities', { 'v0.9': a2ui[0]?.params })).toEqual([]);
  });

  it('a form over SendStreamingMessage: A2UI while INPUT_REQUIRED, errors as a data-model update, then COMPLETED with the values', async () => {
    // Opened with the header A2UI clients send; the response names the activated extension (§10.2).
    const opened = await turn(userMessage([{ text: 'File an expense' }]), {
      'X-A2A-Extensions': V09,
    });
    expect(splitList(opened.headers.get('A2A-Extensions'))).toContain(V09);
    const task = taskOf(opened.responses);
    const asked = lastStatus(opened.responses);
    expect(asked.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(asked.message?.extensions).toEqual([V09]);
    expect(asked.message?.parts[0]?.text).toMatch(/fill in the expense claim/i);
    const form = a2uiOf(asked.message?.parts ?? []);
    expect(form.map((m) => Object.keys(m).find((k) => k !== 'version'))).toEqual([
      'createSurface',
      'updateComponents',
      'updateDataModel',
    ]);
    expect(form[0]).toEqual({
      version: 'v0.9',
      createSurface: { surfaceId: `expense-form-${task.id}`, catalogId: BASIC_CATALOG },
    });

    // An invalid submission, activated with A2A-Extensions this time: the errors come back in the form.
    const invalid = await turn(
      submission(task, { ...VALID, amount: 'a lot', date: '2999-01-01' }),
      {
        'A2A-Extensions': V09,
      },
    );
    expect(splitList(invalid.headers.get('A2A-Extensions'))).toContain(V09);
    const corrected = lastStatus(invalid.responses);
    expect(corrected.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(a2uiOf(corrected.message?.parts ?? [])).toEqual([
      {
        version: 'v0.9',
        updateDataModel: {
          surfaceId: `expense-form-${task.id}`,
          value: expect.objectContaining({
            errors: expect.objectContaining({
              amount: 'Enter an amount such as 42.50.',
              date: 'The date cannot be in the future.',
              description: '',
            }) as unknown,
            status: 'Please correct the 2 fields marked below.',
          }) as unknown,
        },
      },
    ]);

    // A valid submission files it: the artifact carries the values (text, JSON and a summary card).
    const filed = await turn(submission(task, VALID), { 'X-A2A-Extensions': V09 });
    const done = lastStatus(filed.responses);
    expect(done.state).toBe('TASK_STATE_COMPLETED');
    expect(a2uiOf(done.message?.parts ?? [])).toEqual([
      { version: 'v0.9', deleteSurface: { surfaceId: `expense-form-${task.id}` } },
    ]);
    const artifacts = filed.responses.flatMap((r) =>
      'artifactUpdate' in r ? [r.artifactUpdate.artifact] : [],
    );
    expect(artifacts.map((a) => a.artifactId)).toEqual(['expense']);
    const expected = {
      description: 'Taxi to the airport',
      amount: 42.5,
      currency: 'EUR',
      date: '2026-11-30',
      category: 'travel',
    };
    const expectFiled = (artifact: Artifact | undefined): void => {
      expect(artifact?.parts[0]?.text).toMatch(/filed: Taxi to the airport, 42\.50 EUR/);
      expect(artifact?.parts[1]).toEqual({
        data: expect.objectContaining(expected) as unknown,
        mediaType: 'application/json',
      });
      expect(a2uiOf(artifact?.parts ?? []).map((m) => Object.keys(m)[1])).toEqual([
        'createSurface',
        'updateComponents',
        'updateDataModel',
      ]);
    };
    expectFiled(artifacts[0]);

    const stored = taskResult(await rawRpc(endpoint, request('GetTask', { id: task.id })));
    expect(stored.status.state).toBe('TASK_STATE_COMPLETED');
    expectFiled(stored.artifacts?.[0]);

    // The A2UI parts are ordinary task events in the log (so on the Kafka feed, in pushes and replays).
    const events = await taskEvents(platform.db.pool, TENANT, task.id);
    const withA2ui = events.filter((e) => JSON.stringify(e.data).includes(A2UI_V09));
    expect(withA2ui.map((e) => e.event_type)).toEqual([
      'TaskStatusUpdated',
      'UserMessageAppended',
      'TaskStatusUpdated',
      'UserMessageAppended',
      'ArtifactChunkAppended',
      'TaskStatusUpdated',
    ]);
    // Each user message records the extension its request activated.
    const userMessages = events.flatMap((e) =>
      e.event_type === 'TaskSubmitted' || e.event_type === 'UserMessageAppended'
        ? [(e.data as { message: Message }).message]
        : [],
    );
    expect(userMessages.map((m) => m.extensions)).toEqual([[V09], [V09], [V09]]);
  });

  it('a client that activates v0.9.1 gets its media type (both header names at once count once)', async () => {
    const { headers, responses } = await turn(userMessage([{ text: 'File an expense' }]), {
      'A2A-Extensions': V091,
      'X-A2A-Extensions': V091,
    });
    expect(splitList(headers.get('A2A-Extensions'))).toEqual([V091]);
    const asked = lastStatus(responses);
    expect(asked.message?.extensions).toEqual([V091]);
    expect(a2uiOf(asked.message?.parts ?? [], 'application/a2ui+json')).toHaveLength(3);
  });

  it('HTTP+JSON message:send takes X-A2A-Extensions too and returns the form in the INPUT_REQUIRED task', async () => {
    const reply = await rest(
      'POST',
      `${restBaseUrl(platform.baseUrl, TENANT, AGENT)}/message:send`,
      {
        body: { message: userMessage([{ text: 'File an expense' }]) },
        headers: { 'X-A2A-Extensions': V09 },
      },
    );
    expect(splitList(reply.headers.get('A2A-Extensions'))).toContain(V09);
    const { task } = restResult<{ task: Task }>(reply);
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(a2uiOf(task.status.message?.parts ?? [])).toHaveLength(3);
  });

  it('a client without the extension gets text and completes with text lines', async () => {
    const opened = await turn(userMessage([{ text: 'File an expense' }]));
    expect(opened.headers.get('A2A-Extensions')).toBeNull();
    const task = taskOf(opened.responses);
    const asked = lastStatus(opened.responses);
    expect(asked.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(asked.message?.parts).toEqual([{ text: expect.stringMatching(/one line per field/) }]);

    const lines =
      'description: Hotel\namount: 120\ncurrency: GBP\ndate: 2026-11-29\ncategory: lodging';
    const filed = await turn(userMessage([{ text: lines }], task));
    const done = lastStatus(filed.responses);
    expect(done.state).toBe('TASK_STATE_COMPLETED');
    expect(done.message?.parts).toEqual([{ text: expect.stringMatching(/120\.00 GBP/) }]);
    const artifact = filed.responses.flatMap((r) =>
      'artifactUpdate' in r ? [r.artifactUpdate.artifact] : [],
    )[0];
    expect(artifact?.parts.map((p) => p.mediaType ?? 'text')).toEqual(['text', 'application/json']);
    expect(artifact?.parts[1]?.data).toMatchObject({ amount: 120, currency: 'GBP' });
  });
});
