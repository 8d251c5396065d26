import { processEnv } from '@lib/config';
import { repoRoot } from '@lib/testing';
import axe from 'axe-core';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Where a Chromium is looked for: `CHROMIUM_PATH`, then Debian's package (`.ci/run` installs it), then Chrome. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** A headless Chromium driven by playwright-core; no browser is downloaded, the machine's own is used. */
export async function launchChromium(): Promise<Browser> {
  const configured = processEnv()['CHROMIUM_PATH'];
  const executablePath = configured ?? CANDIDATES.find((path) => existsSync(path));
  if (!executablePath) {
    throw new Error(
      `no Chromium found (tried ${CANDIDATES.join(', ')}); install Debian's chromium or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath,
    // Root in CI containers cannot use Chromium's sandbox; /dev/shm is small there.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

/** What a page reported that a test must see none of: CSP violations, uncaught errors, console errors. */
export interface PageProblems {
  readonly list: string[];
}

/**
 * A page of a fresh context at a laptop's screen size, whose CSP violations, uncaught exceptions and console
 * errors are collected (the console must run under its Content-Security-Policy without a single refusal).
 */
export async function openPage(browser: Browser): Promise<{ page: Page; problems: PageProblems }> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
  const page = await context.newPage();
  const problems: PageProblems = { list: [] };
  page.on('pageerror', (error) => problems.list.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') {
      // A resource that failed to load is named by the message's location.
      const url = message.location().url;
      problems.list.push(`console error: ${message.text()}${url ? ` (${url})` : ''}`);
    }
  });
  return { page, problems };
}

/** WCAG 2.1 A and AA rules of axe-core run on the page as it is; resolves to the violations, described. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as unknown as { axe: typeof axe }).axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return result.violations.map(
      (violation) =>
        `${violation.id} (${violation.impact ?? 'n/a'}): ${violation.help}; ${violation.nodes
          .slice(0, 3)
          .map((node) => node.target.join(' '))
          .join(', ')}`,
    );
  });
  return violations;
}

/** Writes a full-page screenshot to `docs/console/<name>.png` (linked from the README). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = join(repoRoot(), 'docs', 'console');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/**
 * The page as it is now has no accessibility violation and reported no problem (CSP refusal, uncaught error,
 * console error); then its screenshot `name`.
 */
export async function expectCleanPage(
  page: Page,
  problems: PageProblems,
  name: string,
): Promise<void> {
  expect(await accessibilityViolations(page), name).toEqual([]);
  expect(problems.list, name).toEqual([]);
  await screenshot(page, name);
}
