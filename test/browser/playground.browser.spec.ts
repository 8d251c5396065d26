/**
 * The agent user's face of the console (apps/console/src/playground) in Chromium against the whole platform:
 * sign in with the demo tenant's API key, pick an agent and see its card, stream answers, cancel, resume a
 * stream after a reload (Last-Event-ID), answer a task that waits for input, read the raw frames, and render
 * an agent's A2UI form, whose submission goes back to the agent on the same task. Every state is checked for
 * accessibility violations and for CSP refusals or console errors, and photographed (docs/console/).
 */
import type { JsonValue, Part } from '@lib/a2a-protocol';
import { seedTenant } from '@lib/tenancy';
import {
  AgentWorker,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
  type WorkerLogger,
} from '@lib/worker-sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_API_KEY } from '../e2e/support/wire';
import { expectCleanPage, launchChromium, openPage, type PageProblems } from './support/browser';
import { bootConsolePlatform, type ConsolePlatform } from './support/console-platform';

const A2UI_EXTENSION = 'https://a2ui.org/a2a-extension/a2ui/v0.9';
const A2UI_MEDIA_TYPE = 'application/json+a2ui';
const BASIC_CATALOG = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';
const FORMS_SECRET = 'forms-worker-secret';
/** How long a poll may wait: a countdown step, a stream resumed after a reload. */
const POLL = { timeout: 10_000 };

/** The messages of a small order form: a name, a city and a Submit button whose action carries both. */
function orderForm(surfaceId: string): JsonValue[] {
  return [
    { version: 'v0.9', createSurface: { surfaceId, catalogId: BASIC_CATALOG } },
    {
      version: 'v0.9',
      updateComponents: {
        surfaceId,
        components: [
          { id: 'root', component: 'Column', children: ['title', 'name', 'city', 'submit'] },
          { id: 'title', component: 'Text', text: 'Your order', variant: 'h3' },
          { id: 'name', component: 'TextField', label: 'Your name', value: { path: '/name' } },
          { id: 'city', component: 'TextField', label: 'City', value: { path: '/city' } },
          {
            id: 'submit',
            component: 'Button',
            child: 'submit-label',
            variant: 'primary',
            action: {
              event: {
                name: 'submit_order',
                context: { name: { path: '/name' }, city: { path: '/city' } },
              },
            },
          },
          { id: 'submit-label', component: 'Text', text: 'Submit order' },
        ],
      },
    },
    { version: 'v0.9', updateDataModel: { surfaceId, path: '/', value: { name: '', city: '' } } },
  ];
}

/** Agent UI the console must refuse: too many components, too deep, a cycle, an image from plain http. */
function unsafeSurfaces(): JsonValue[] {
  const many = Array.from({ length: 600 }, (_, i) => ({
    id: `t${i}`,
    component: 'Text',
    text: `line ${i}`,
  }));
  return [
    { version: 'v0.9', createSurface: { surfaceId: 'huge', catalogId: BASIC_CATALOG } },
    {
      version: 'v0.9',
      updateComponents: {
        surfaceId: 'huge',
        components: [{ id: 'root', component: 'Column', children: many.map((c) => c.id) }, ...many],
      },
    },
    { version: 'v0.9', createSurface: { surfaceId: 'deep', catalogId: BASIC_CATALOG } },
    {
      version: 'v0.9',
      updateComponents: {
        surfaceId: 'deep',
        components: Array.from({ length: 25 }, (_, i) => ({
          id: i === 0 ? 'root' : `c${i}`,
          component: 'Column',
          children: i === 24 ? [] : [`c${i + 1}`],
        })),
      },
    },
    { version: 'v0.9', createSurface: { surfaceId: 'loop', catalogId: BASIC_CATALOG } },
    {
      version: 'v0.9',
      updateComponents: {
        surfaceId: 'loop',
        components: [
          { id: 'root', component: 'Column', children: ['inner'] },
          { id: 'inner', component: 'Card', child: 'root' },
        ],
      },
    },
    { version: 'v0.9', createSurface: { surfaceId: 'tracker', catalogId: BASIC_CATALOG } },
    {
      version: 'v0.9',
      updateComponents: {
        surfaceId: 'tracker',
        components: [{ id: 'root', component: 'Image', url: 'http://tracker.example/pixel.png' }],
      },
    },
  ];
}

/** What the test agent was sent, for the checks on the agent's side. */
const received: { metadata: unknown; parts: Part[]; extensions: unknown; taskId: string }[] = [];

/**
 * Agent `forms` (this test's own worker): a first message gets the order form in TASK_STATE_INPUT_REQUIRED
 * ('unsafe' gets surfaces the console must refuse); the form's A2UI action completes the task with an
 * artifact of the submitted values.
 */
class FormsAgent implements AgentExecutor {
  async execute(context: RequestContext, events: ExecutionEventBus): Promise<void> {
    const message = context.userMessage;
    received.push({
      metadata: message.metadata,
      parts: message.parts,
      extensions: message.extensions,
      taskId: context.taskId,
    });
    const action = actionOf(message.parts);
    if (action === null) {
      const unsafe = message.parts.some((p) => p.text === 'unsafe');
      await events.status('TASK_STATE_INPUT_REQUIRED', [
        { text: unsafe ? 'Here is some UI.' : 'Please fill in the order form.' },
        { data: unsafe ? unsafeSurfaces() : orderForm('order'), mediaType: A2UI_MEDIA_TYPE },
      ]);
      return;
    }
    const { name, city } = action;
    await events.artifact({
      artifactId: 'order',
      name: 'order',
      parts: [{ text: `Ordered for ${JSON.stringify(name)} in ${JSON.stringify(city)}` }],
      lastChunk: true,
    });
    await events.complete('Thank you for your order.');
  }
}

/** The `context` of the A2UI action in a message's A2UI DataPart, or null. */
function actionOf(parts: Part[]): Record<string, JsonValue> | null {
  for (const part of parts) {
    if (part.mediaType !== A2UI_MEDIA_TYPE || !Array.isArray(part.data)) {
      continue;
    }
    for (const entry of part.data) {
      const action = (entry as { action?: { context?: Record<string, JsonValue> } }).action;
      if (action?.context) {
        return action.context;
      }
    }
  }
  return null;
}

const silent: WorkerLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe('the agent playground', () => {
  let platform: ConsolePlatform;
  let browser: Browser;
  let worker: AgentWorker;

  beforeAll(async () => {
    [platform, browser] = await Promise.all([bootConsolePlatform('playground'), launchChromium()]);
    await seedTenant(platform.db.pool, {
      tenantId: 'demo',
      displayName: 'Demo',
      apiKeys: [],
      agents: [
        {
          agentId: 'forms',
          profile: {
            name: 'Forms',
            description: 'Asks for an order with an A2UI form, then confirms it.',
            version: '1.0.0',
            defaultInputModes: ['text/plain', A2UI_MEDIA_TYPE],
            defaultOutputModes: ['text/plain', A2UI_MEDIA_TYPE],
            skills: [
              {
                id: 'order',
                name: 'Order',
                description: 'Shows an order form and completes with the submitted values.',
                tags: ['a2ui'],
                examples: ['order'],
              },
            ],
            extensions: [
              {
                uri: A2UI_EXTENSION,
                description: 'Renders A2UI v0.9',
                required: false,
                params: { supportedCatalogIds: [BASIC_CATALOG] },
              },
            ],
          },
          workerSecret: FORMS_SECRET,
        },
      ],
    });
    worker = AgentWorker.create({
      target: platform.workerTarget,
      credential: FORMS_SECRET,
      executor: new FormsAgent(),
      logger: silent,
    });
    worker.run().catch(() => undefined);
  });

  afterAll(async () => {
    await worker?.shutdown();
    await browser?.close();
    await platform?.close();
  });

  /** A page signed in with the demo key, the agent list loaded. */
  async function signedIn(): Promise<{ page: Page; problems: PageProblems }> {
    const opened = await openPage(browser);
    await opened.page.goto(`${platform.consoleUrl}playground`);
    await opened.page.getByLabel('Tenant API key').fill(DEMO_API_KEY);
    await opened.page.getByRole('button', { name: 'Sign in' }).click();
    await opened.page.getByRole('option', { name: /Echo/ }).waitFor({ state: 'attached' });
    return opened;
  }

  async function choose(page: Page, agent: string, name: string): Promise<void> {
    await page.getByLabel('Agent of your tenant').selectOption(`demo/${agent}`);
    await page.getByRole('heading', { name: `Agent card: ${name}` }).waitFor();
  }

  async function say(page: Page, text: string): Promise<void> {
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: /^Send/ }).click();
  }

  /**
   * Sends the page's next SendStreamingMessage to `agent` to the platform but never gives the page the answer;
   * resolves once the platform has answered it in full. Other calls pass. The held request must stay held
   * until a reload drops it: unrouting first releases it to the platform again, and the page would show the
   * answer to that repeat (the same message: the task as it ended) instead of resuming.
   */
  function holdAnswer(page: Page, agent: string): Promise<void> {
    return new Promise<void>((resolve) => {
      void page.route(`**/agents/demo/${agent}/jsonrpc`, async (route) => {
        if (!(route.request().postData() ?? '').includes('"SendStreamingMessage"')) {
          await route.continue();
          return;
        }
        await route.fetch().catch(() => undefined);
        resolve();
      });
    });
  }

  /** The texts of the artifact's parts, in order. */
  function artifactParts(page: Page, artifactId: string): Promise<string[]> {
    return page.locator(`[data-artifact="${artifactId}"] .part`).allTextContents();
  }

  function taskState(page: Page): Promise<string | null> {
    return page.locator('#task-state').textContent();
  }

  /** The state is accessible, raised no CSP refusal or console error, and is photographed. */
  function checkState(page: Page, problems: PageProblems, name: string): Promise<void> {
    return expectCleanPage(page, problems, `playground-${name}`);
  }

  it("lists the tenant's agents and shows a card with its validation", async () => {
    const { page, problems } = await signedIn();
    const options = await page
      .getByLabel('Agent of your tenant')
      .locator('option')
      .allTextContents();
    expect(options.map((o) => o.trim())).toEqual(
      expect.arrayContaining([
        'Echo (demo/echo)',
        'Countdown (demo/countdown)',
        'Forms (demo/forms)',
      ]),
    );
    await choose(page, 'echo', 'Echo');
    const checks = page.locator('.checks li');
    await expect.poll(() => checks.count(), POLL).toBe(4);
    expect((await checks.allTextContents()).map((c) => c.trim())).toEqual([
      expect.stringMatching(/^✓ Required fields: all present/),
      expect.stringMatching(/^✓ Supported interfaces: JSONRPC 1\.0, HTTP\+JSON 1\.0, GRPC 1\.0/),
      expect.stringMatching(/^✓ Signature present: ES256 key /),
      expect.stringMatching(
        /^✓ Signature verifies: with ES256 key \S+ of http:.*\/\.well-known\/jwks\.json$/,
      ),
    ]);
    await checkState(page, problems, 'agent-card');
    await page.close();
  });

  it('says when a card does not match its signature', async () => {
    const { page, problems } = await signedIn();
    await page.route('**/agents/demo/echo/.well-known/agent-card.json', async (route) => {
      const response = await route.fetch();
      const card = (await response.json()) as Record<string, unknown>;
      await route.fulfill({ response, json: { ...card, description: 'Tampered with.' } });
    });
    await choose(page, 'echo', 'Echo');
    const checks = page.locator('.checks li');
    await expect.poll(() => checks.count(), POLL).toBe(4);
    expect(await checks.nth(2).textContent()).toContain('✓ Signature present');
    expect(await checks.nth(3).textContent()).toContain(
      '✗ Signature verifies: the signature does not match the card',
    );
    await checkState(page, problems, 'card-tampered');
    await page.close();
  });

  it('sends a message to echo and shows the streamed answer', async () => {
    const { page, problems } = await signedIn();
    await choose(page, 'echo', 'Echo');
    await say(page, 'hello from the playground');
    await expect.poll(() => taskState(page), POLL).toContain('completed');
    expect(await artifactParts(page, 'echo')).toEqual(['hello from the playground']);
    const statuses = await page.locator('.timeline li.status').all();
    const states = await Promise.all(statuses.map((status) => status.getAttribute('data-state')));
    expect(states).toEqual(expect.arrayContaining(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']));
    await checkState(page, problems, 'echo');
    await page.close();
  });

  it('follows a countdown live and cancels it', async () => {
    const { page, problems } = await signedIn();
    await choose(page, 'countdown', 'Countdown');
    await say(page, '30');
    await expect.poll(() => artifactParts(page, 'countdown'), POLL).toEqual(['30', '29']);
    expect(await taskState(page)).toContain('working');
    await checkState(page, problems, 'countdown-live');
    await page.getByRole('button', { name: 'Cancel task' }).click();
    await expect.poll(() => taskState(page), POLL).toContain('canceled');
    expect((await artifactParts(page, 'countdown')).length).toBeLessThan(30);
    await expect
      .poll(() => page.getByRole('button', { name: 'Cancel task' }).count(), POLL)
      .toBe(0);
    await checkState(page, problems, 'countdown-canceled');
    await page.close();
  });

  it('resumes a countdown after a reload with Last-Event-ID: no event missed, none twice', async () => {
    const { page, problems } = await signedIn();
    await choose(page, 'countdown', 'Countdown');
    await say(page, '6');
    await expect.poll(() => artifactParts(page, 'countdown'), POLL).toEqual(['6', '5']);
    await page.reload();
    await page.getByRole('heading', { name: 'Agent card: Countdown' }).waitFor();
    await expect.poll(() => taskState(page), { timeout: 15_000 }).toContain('completed');
    expect(await artifactParts(page, 'countdown')).toEqual(['6', '5', '4', '3', '2', '1']);
    const steps = (await page.locator('.timeline li.status').allTextContents())
      .map((text) => /step \d+\/6/.exec(text)?.[0])
      .filter((step) => step !== undefined);
    expect(steps).toEqual(['step 1/6', 'step 2/6', 'step 3/6', 'step 4/6', 'step 5/6', 'step 6/6']);
    await page.getByText(/^Raw frames/).click();
    const resumed = page
      .locator('.frame')
      .filter({ has: page.locator('h3', { hasText: 'SubscribeToTask' }) });
    await expect.poll(() => resumed.count(), POLL).toBe(1);
    expect(await resumed.locator('pre').textContent()).toMatch(/last-event-id: \d+/);
    await checkState(page, problems, 'resumed');
    await page.close();
  });

  it('finds and replays a new task whose every event came while the page was away', async () => {
    const { page, problems } = await signedIn();
    await choose(page, 'countdown', 'Countdown');
    // The platform takes the message and runs the task; the page never hears back before its reload.
    const answered = holdAnswer(page, 'countdown');
    await say(page, '3');
    await answered;
    await page.reload();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.getByRole('heading', { name: 'Agent card: Countdown' }).waitFor();
    await expect.poll(() => taskState(page), POLL).toContain('completed');
    expect(await artifactParts(page, 'countdown')).toEqual(['3', '2', '1']);
    const steps = (await page.locator('.timeline li.status').allTextContents())
      .map((text) => /step \d+\/3/.exec(text)?.[0])
      .filter((step) => step !== undefined);
    expect(steps).toEqual(['step 1/3', 'step 2/3', 'step 3/3']);
    expect(await page.locator('.timeline li.notice').count()).toBe(0);
    await page.getByText(/^Raw frames/).click();
    expect(await page.locator('.frame h3', { hasText: /Sent POST .* ListTasks$/ }).count()).toBe(1);
    const resumed = page
      .locator('.frame')
      .filter({ has: page.locator('h3', { hasText: 'SubscribeToTask' }) });
    expect(await resumed.locator('pre').textContent()).toContain('last-event-id: 0');
    await checkState(page, problems, 'replayed');
    await page.close();
  });

  it('answers an agent that asks for input on the same task (multi-turn)', async () => {
    const { page, problems } = await signedIn();
    await choose(page, 'interview', 'Interview');
    await say(page, 'Hi there');
    await expect.poll(() => taskState(page), POLL).toContain('input required');
    await page.locator('.timeline').getByText('What is your name?').waitFor();
    const firstTask = await page.locator('#task-state code').textContent();
    await checkState(page, problems, 'input-required');
    await page.getByLabel('Message', { exact: true }).fill('Ada Lovelace');
    await page.getByRole('button', { name: 'Send on this task' }).click();
    await expect.poll(() => taskState(page), POLL).toContain('completed');
    expect(await page.locator('#task-state code').textContent()).toBe(firstTask);
    expect(await artifactParts(page, 'greeting')).toEqual(['Nice to meet you, Ada Lovelace!']);
    await checkState(page, problems, 'multi-turn');
    await page.close();
  });

  it('resumes the answer to a task that waited for input when the page was reloaded before it came', async () => {
    const { page, problems } = await signedIn();
    await choose(page, 'interview', 'Interview');
    await say(page, 'Hello');
    await expect.poll(() => taskState(page), POLL).toContain('input required');
    const answered = holdAnswer(page, 'interview');
    await page.getByLabel('Message', { exact: true }).fill('Grace Hopper');
    await page.getByRole('button', { name: 'Send on this task' }).click();
    await answered;
    await page.reload();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await expect.poll(() => taskState(page), POLL).toContain('completed');
    expect(await artifactParts(page, 'greeting')).toEqual(['Nice to meet you, Grace Hopper!']);
    const states = await Promise.all(
      (await page.locator('.timeline li.status').all()).map((s) => s.getAttribute('data-state')),
    );
    expect(states.filter((state) => state === 'TASK_STATE_INPUT_REQUIRED')).toHaveLength(1);
    expect(states.at(-1)).toBe('TASK_STATE_COMPLETED');
    await checkState(page, problems, 'multi-turn-resumed');
    await page.close();
  });

  it('shows every frame sent and received, without the API key', async () => {
    const { page, problems } = await signedIn();
    await choose(page, 'echo', 'Echo');
    await say(page, 'frames please');
    await expect.poll(() => taskState(page), POLL).toContain('completed');
    await page.getByText(/^Raw frames/).click();
    const labels = (await page.locator('.frame h3').allTextContents()).map((l) => l.trim());
    expect(labels[0]).toMatch(
      /^← Received 200 GET .*\/agents\/demo\/echo\/\.well-known\/agent-card\.json$/,
    );
    expect(labels[1]).toMatch(/^→ Sent POST .*\/agents\/demo\/echo\/jsonrpc SendStreamingMessage$/);
    expect(labels.slice(2).every((l) => /^← Received SSE message id \d+$/.test(l))).toBe(true);
    expect(labels.length).toBeGreaterThanOrEqual(4);
    const sent = (await page.locator('.frame pre').nth(1).textContent()) ?? '';
    expect(sent).toContain('a2a-version: 1.0');
    expect(sent).toContain('"method": "SendStreamingMessage"');
    expect(sent).toContain('"a2uiClientCapabilities"');
    expect(sent).not.toContain(DEMO_API_KEY);
    await checkState(page, problems, 'raw-frames');
    await page.close();
  });

  it('renders an A2UI form with the official renderer and sends the action back on the same task', async () => {
    const { page, problems } = await signedIn();
    await choose(page, 'forms', 'Forms');
    await page.getByText(`${A2UI_EXTENSION} — activated`).waitFor();
    await say(page, 'order');
    await expect.poll(() => taskState(page), POLL).toContain('input required');
    const form = page.locator('[data-surface="order"]');
    await form.getByRole('button', { name: 'Submit order' }).waitFor();
    await checkState(page, problems, 'a2ui-form');
    const fields = form.locator('input');
    await fields.nth(0).fill('Ada');
    await fields.nth(1).fill('Paris');
    await form.getByRole('button', { name: 'Submit order' }).click();
    await expect.poll(() => taskState(page), POLL).toContain('completed');
    expect(await artifactParts(page, 'order')).toEqual(['Ordered for "Ada" in "Paris"']);
    const [first, second] = received.slice(-2);
    expect(first?.metadata).toEqual({
      a2uiClientCapabilities: { 'v0.9': { supportedCatalogIds: [BASIC_CATALOG] } },
    });
    expect(second?.taskId).toBe(first?.taskId);
    expect(second?.extensions).toEqual([A2UI_EXTENSION]);
    expect(second?.parts).toEqual([
      {
        mediaType: A2UI_MEDIA_TYPE,
        data: [
          {
            version: 'v0.9',
            action: {
              name: 'submit_order',
              surfaceId: 'order',
              sourceComponentId: 'submit',
              timestamp: expect.any(String) as unknown,
              context: { name: 'Ada', city: 'Paris' },
            },
          },
        ],
      },
    ]);
    await page.getByText(/^Raw frames/).click();
    expect(await page.locator('.frame pre').nth(1).textContent()).toContain(
      `a2a-extensions: https://a2a-platform.dev/extensions/resumable-streams/v1,${A2UI_EXTENSION}`,
    );
    await checkState(page, problems, 'a2ui-completed');
    await page.close();
  });

  it('refuses agent UI beyond its limits or with unsafe URLs, with a visible notice', async () => {
    const { page, problems } = await signedIn();
    await choose(page, 'forms', 'Forms');
    await say(page, 'unsafe');
    await expect.poll(() => taskState(page), POLL).toContain('input required');
    await page.getByText('Refused surface huge: 601 components, more than 500').waitFor();
    await page.getByText('Refused surface deep: nested 25 deep, more than 20').waitFor();
    await page.getByText('Refused surface loop: a component contains itself').waitFor();
    await page
      .getByText(/Refused surface tracker: component root \(Image\) links to http:\/\/tracker/)
      .waitFor();
    expect(await page.locator('a2ui-surface').count()).toBe(0);
    expect(await page.locator('[data-surface] img').count()).toBe(0);
    expect(await page.getByText('line 1', { exact: true }).count()).toBe(0);
    await checkState(page, problems, 'a2ui-refused');
    await page.close();
  });
});
