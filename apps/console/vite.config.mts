import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// The console is static files served by the admin API under /console/ (apps/admin-api/src/console.ts)
// with a strict Content-Security-Policy: the build emits no inline script and needs no eval. Paths are from
// the repository root, where npm runs its scripts.
const root = resolve('apps/console');

export default defineConfig({
  root,
  base: '/console/',
  publicDir: false,
  build: {
    outDir: resolve('dist/console'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    modulePreload: { polyfill: false },
    rollupOptions: {
      input: {
        operator: resolve(root, 'index.html'),
        playground: resolve(root, 'playground.html'),
      },
    },
  },
});
