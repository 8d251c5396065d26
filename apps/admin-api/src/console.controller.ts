import type { AdminApiConfig } from '@lib/config';
import { Controller, Get, Inject, NotFoundException, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { readFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { ADMIN_CONFIG } from './tokens';

/**
 * What every console response may load: its own scripts, styles and fonts only (no inline script, no eval),
 * images from https and data: (agent UIs show them), calls to its own origin (the admin API and the A2A
 * bindings), no framing, no forms posted anywhere.
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

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** The console's pages by their path under `/console/`. */
const PAGES: Readonly<Record<string, string>> = {
  '': 'index.html',
  playground: 'playground.html',
};

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Serves the built web console (`apps/console`, built into `dist/console`) at `/console/`. Public: the pages
 * hold no secret, and every call they make carries the credential the user signs in with. Hashed assets are
 * cached for good, pages are revalidated.
 */
@Controller('console')
export class ConsoleController {
  private readonly root: string;

  constructor(@Inject(ADMIN_CONFIG) config: AdminApiConfig) {
    this.root = resolve(config.CONSOLE_DIR ?? join(__dirname, '..', '..', '..', 'console'));
  }

  @Get()
  index(@Res() res: Response): Promise<void> {
    return this.send(res, []);
  }

  @Get('*path')
  file(@Param('path') path: string[], @Res() res: Response): Promise<void> {
    return this.send(res, path);
  }

  private async send(res: Response, segments: readonly string[]): Promise<void> {
    const parts = segments.filter((segment) => segment !== '');
    const page = PAGES[parts.join('/')];
    const relative = page ?? parts.join('/');
    const type = CONTENT_TYPES[extname(relative)];
    if (!type || (page === undefined && !parts.every((segment) => SEGMENT.test(segment)))) {
      throw new NotFoundException(`no console file at /console/${parts.join('/')}`);
    }
    let body: Buffer;
    try {
      body = await readFile(join(this.root, relative));
    } catch {
      throw new NotFoundException(
        page === undefined
          ? `no console file at /console/${parts.join('/')}`
          : `the console is not built (no ${relative} in ${this.root}): run npm run build`,
      );
    }
    res.setHeader('Content-Type', type);
    res.setHeader('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader(
      'Cache-Control',
      parts[0] === 'assets' ? 'public, max-age=31536000, immutable' : 'no-cache',
    );
    res.status(200).send(body);
  }
}
