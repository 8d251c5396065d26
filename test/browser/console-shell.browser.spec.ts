import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, openPage, screenshot } from './support/browser';
import { bootConsolePlatform, type ConsolePlatform } from './support/console-platform';

describe('the console is served under its Content-Security-Policy', () => {
  let platform: ConsolePlatform;
  let browser: Browser;

  beforeAll(async () => {
    [platform, browser] = await Promise.all([
      bootConsolePlatform('console_shell'),
      launchChromium(),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.close();
  });

  it('serves both pages and their assets with the policy, and nothing outside the console folder', async () => {
    const page = await fetch(platform.consoleUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).not.toContain('unsafe');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(`${platform.baseUrl}${asset!}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('text/javascript');
    expect(script.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${platform.consoleUrl}playground`)).status).toBe(200);
    for (const path of [
      '..%2Fpackage.json',
      'assets/..%2F..%2Fpackage.json',
      'assets/none.js',
      'x.txt',
    ]) {
      expect((await fetch(`${platform.consoleUrl}${path}`)).status, path).toBe(404);
    }
  });

  it('signs an operator in, refusing a wrong credential, with no policy refusal or accessibility violation', async () => {
    const { page, problems } = await openPage(browser);
    await page.goto(platform.consoleUrl);
    await page.getByLabel('Admin credential').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('401');
    // The refused call is the one error the page reports.
    problems.list.splice(0);
    await page.getByLabel('Admin credential').fill(platform.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('cell', { name: 'demo', exact: true }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(problems.list).toEqual([]);
    await page.close();
  });

  it('opens the agent playground', async () => {
    const { page, problems } = await openPage(browser);
    await page.goto(`${platform.consoleUrl}playground`);
    await page.getByLabel('Tenant API key').waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'playground-sign-in');
    expect(problems.list).toEqual([]);
    await page.close();
  });
});
