import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonRpcUrl } from '../e2e/support/json-rpc';
import { DEMO_API_KEY } from '../e2e/support/wire';
import { expectCleanPage, launchChromium, openPage, type PageProblems } from './support/browser';
import { bootConsolePlatform, type ConsolePlatform } from './support/console-platform';

const POLL = { timeout: 15_000 };

interface FiledTask {
  status: { state: string };
  artifacts?: {
    artifactId: string;
    parts: { text?: string; data?: unknown; mediaType?: string }[];
  }[];
}

/**
 * The A2UI example agent (`expense`, apps/agents/src/expense.agent.ts) through the playground: the form it
 * streams is rendered by the official renderer, its validation errors come back into the form while the task
 * waits, and a valid claim completes the task with the submitted values.
 */
describe('the expense agent’s A2UI form in the console', () => {
  let platform: ConsolePlatform;
  let browser: Browser;

  beforeAll(async () => {
    [platform, browser] = await Promise.all([
      bootConsolePlatform('console_expense'),
      launchChromium(),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.close();
  });

  function check(page: Page, problems: PageProblems, name: string): Promise<void> {
    return expectCleanPage(page, problems, `playground-expense-${name}`);
  }

  async function getTask(id: string): Promise<FiledTask> {
    const response = await fetch(jsonRpcUrl(platform.baseUrl, 'demo', 'expense'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'a2a-version': '1.0',
        'x-api-key': DEMO_API_KEY,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }),
    });
    return ((await response.json()) as { result: FiledTask }).result;
  }

  it('fills the form, sees its errors, corrects them, submits and sees the task complete with the values', async () => {
    const { page, problems } = await openPage(browser);
    await page.goto(`${platform.consoleUrl}playground`);
    await page.getByLabel('Tenant API key').fill(DEMO_API_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Agent of your tenant').selectOption('demo/expense');
    await page.getByText('https://a2ui.org/a2a-extension/a2ui/v0.9 — activated').waitFor();
    await page.getByLabel('Message', { exact: true }).fill('I need to file an expense');
    await page.getByRole('button', { name: /^Send/ }).click();

    const stateText = (): Promise<string | null> => page.locator('#task-state').textContent();
    await expect.poll(stateText, POLL).toContain('input required');
    const taskId = /Task (\S+):/.exec((await stateText()) ?? '')?.[1];
    expect(taskId).toBeDefined();
    const form = page.getByRole('region', { name: 'Agent UI' });
    await form.getByRole('heading', { name: 'Expense claim' }).waitFor();
    await check(page, problems, 'form');

    // Invalid: too short a description and an amount with three decimals.
    await form.getByLabel('Description').fill('Tx');
    await form.getByLabel('Amount').fill('1.234');
    await form.getByRole('button', { name: 'Submit expense' }).click();
    await form.getByText('Describe the expense in 3 to 200 characters.').waitFor(POLL);
    await form.getByText('Enter an amount such as 42.50.').waitFor(POLL);
    expect(await stateText()).toContain('input required');
    expect((await getTask(taskId!)).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    await check(page, problems, 'errors');

    await form.getByLabel('Description').fill('Taxi to the airport');
    await form.getByLabel('Amount').fill('42.50');
    await form.getByRole('radio', { name: 'USD' }).check();
    await form.getByLabel('Date').fill('2026-11-30');
    await form.getByRole('radio', { name: 'travel' }).check();
    await form.getByRole('button', { name: 'Submit expense' }).click();
    await expect.poll(stateText, POLL).toContain('completed');
    // The summary card, rendered from the artifact's A2UI, shows the values.
    await page.getByRole('heading', { name: 'Expense filed' }).waitFor(POLL);
    for (const value of ['Taxi to the airport', '42.5', 'USD', '2026-11-30', 'travel']) {
      await expect
        .poll(() => page.getByText(value, { exact: false }).count(), POLL)
        .toBeGreaterThan(0);
    }
    await check(page, problems, 'completed');

    const filed = await getTask(taskId!);
    expect(filed.status.state).toBe('TASK_STATE_COMPLETED');
    const values = filed.artifacts
      ?.find((artifact) => artifact.artifactId === 'expense')
      ?.parts.find((part) => part.mediaType === 'application/json')?.data;
    expect(values).toMatchObject({
      description: 'Taxi to the airport',
      amount: 42.5,
      currency: 'USD',
      date: '2026-11-30',
      category: 'travel',
    });
    await page.close();
  });
});
