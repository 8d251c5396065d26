import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** Where the web console is served. */
export const CONSOLE_PATH = '/console';

/**
 * The Content-Security-Policy of every console response: scripts, styles, fonts and calls from the console's
 * own origin only (no inline script, no eval), images also from https and data URLs, no framing, no forms,
 * no `<base>`. The console's authors adjust it here.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The pages by the path they are served at too: `/console/` and `/console/playground`. */
const PAGES: Readonly<Record<string, string>> = {
  '/': 'index.html',
  '/playground': 'playground.html',
};

/** `Cache-Control` of the hashed build assets (`assets/…`: a new build has new names). */
const ASSET_CACHE = 'public, max-age=31536000, immutable';
/** `Cache-Control` of the pages: revalidated on every load, so a new build is seen at once. */
const PAGE_CACHE = 'no-cache';

/** The console build of the code that runs: `dist/console` beside `dist/apps/admin-api/src`. */
export function defaultConsoleDir(): string {
  return resolve(__dirname, '..', '..', '..', 'console');
}

/**
 * Serves the built web console (`dir`: index.html for operators, playground.html for agent users,
 * `assets/…`) at {@link CONSOLE_PATH}: GET and HEAD only, every answer with the console's security headers.
 * A folder that does not exist answers 404 saying so; the API is not affected.
 */
export function consoleHandler(
  dir: string,
): (req: Request, res: Response, next: NextFunction) => void {
  const root = resolve(dir);
  return (req, res) => {
    res.setHeader('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      plain(res, 405, 'method not allowed');
      return;
    }
    // `/console` itself: the pages' relative links need the trailing slash.
    if (req.path === '/' && !req.originalUrl.split('?')[0]?.endsWith('/')) {
      res.redirect(301, `${CONSOLE_PATH}/`);
      return;
    }
    if (!existsSync(root)) {
      plain(
        res,
        404,
        `the web console is not built: ${root} does not exist (build it, or set ADMIN_CONSOLE_DIR)`,
      );
      return;
    }
    const file = PAGES[req.path] ?? fileOf(req.path);
    if (file === null) {
      plain(res, 404, 'not found');
      return;
    }
    res.setHeader('Cache-Control', file.startsWith('assets/') ? ASSET_CACHE : PAGE_CACHE);
    res.sendFile(file, { root, dotfiles: 'deny', cacheControl: false }, (error?: Error) => {
      if (error && !res.headersSent) {
        res.setHeader('Cache-Control', 'no-store');
        plain(res, 404, `no ${CONSOLE_PATH}/${file} in the web console`);
      }
    });
  };
}

/** Mounts {@link consoleHandler} on the app's HTTP server (the admin API's own, or the standalone ingress's). */
export function serveConsole(app: INestApplication, dir: string | undefined): void {
  app.use(CONSOLE_PATH, consoleHandler(dir ?? defaultConsoleDir()));
}

/** The file a request path names inside the console folder; null for a malformed one. */
function fileOf(path: string): string | null {
  try {
    return decodeURIComponent(path).slice(1);
  } catch {
    return null;
  }
}

function plain(res: Response, status: number, text: string): void {
  res.status(status).type('text/plain; charset=utf-8').send(`${text}\n`);
}
