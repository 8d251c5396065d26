/**
 * Importing an existing A2A server from the operator console (issue 32, docs/upstream.md): the example A2A
 * server (its own process, the official a2a-js SDK) and the whole platform with an upstream key and the
 * demo tenant allowed to reach 127.0.0.1. A platform admin imports it from the Agents page, sees where it
 * forwards to (header names only), and reads its card again.
 */
import { startUpstreamAgent, type UpstreamAgentProcess } from '@lib/testing';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCleanPage, launchChromium, openPage, type PageProblems } from './support/browser';
import { bootConsolePlatform, type ConsolePlatform } from './support/console-platform';

const HEADER_VALUE = `team-${randomBytes(8).toString('hex')}`;

let upstream: UpstreamAgentProcess;
let platform: ConsolePlatform;
let browser: Browser;
let page: Page;
let problems: PageProblems;

beforeAll(async () => {
  upstream = await startUpstreamAgent({ UPSTREAM_NAME: 'Weather desk' });
  [platform, browser] = await Promise.all([
    bootConsolePlatform('console_upstream', {
      UPSTREAM_SECRETS_KEY: randomBytes(32).toString('base64'),
      UPSTREAM_ALLOWLIST: JSON.stringify({ demo: ['127.0.0.1'] }),
    }),
    launchChromium(),
  ]);
  ({ page, problems } = await openPage(browser));
});

afterAll(async () => {
  await browser?.close();
  await platform?.close();
  await upstream?.process.stop();
});

describe('importing an A2A server in the operator console', () => {
  it('imports it from the Agents page, shows where it forwards to without the header’s value, and reads its card again', async () => {
    await page.goto(platform.consoleUrl);
    await page.getByLabel('Admin credential').fill(platform.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'demo', exact: true }).waitFor();
    await page.goto(`${platform.consoleUrl}#/tenants/demo/agents`);
    await page.getByRole('heading', { level: 1, name: 'Agents of demo' }).waitFor();
    await page.getByRole('button', { name: 'Import from an A2A server' }).click();
    await page.getByLabel('Agent id').fill('weather');
    await page.getByLabel('Agent card URL').fill(upstream.cardUrl);
    await page.getByLabel('Binding').selectOption('HTTP+JSON');
    await page.getByLabel(/^Headers sent to it/).fill(`X-Team: ${HEADER_VALUE}`);
    await page.getByRole('button', { name: 'Import agent' }).click();

    await page.getByRole('heading', { level: 1, name: 'Agent weather' }).waitFor();
    await page.getByRole('heading', { name: 'Card: Weather desk', exact: false }).waitFor();
    const panel = page.getByRole('region', { name: 'Imported from an A2A server' });
    await panel.waitFor();
    const text = (await panel.textContent()) ?? '';
    expect(text).toContain(upstream.cardUrl);
    expect(text).toContain(`http://127.0.0.1:${upstream.httpPort}/a2a/rest`);
    expect(text).toContain('HTTP+JSON');
    expect(text).toContain('X-Team');
    expect(await page.content()).not.toContain(HEADER_VALUE);

    await page.getByRole('button', { name: 'Read the card again' }).click();
    await panel.getByText('The card is unchanged.').waitFor();
    await expectCleanPage(page, problems, 'operator-upstream');

    await page.goto(`${platform.consoleUrl}#/tenants/demo/agents`);
    const row = page.getByRole('row', { name: /weather/ });
    await expect.poll(() => row.textContent()).toContain('imported');
    const stored = await platform.admin<{ headerNames: string[] }>(
      'GET',
      '/tenants/demo/agents/weather/upstream',
    );
    expect(stored.headerNames).toEqual(['X-Team']);
  });
});
