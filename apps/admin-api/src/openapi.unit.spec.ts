import { RequestMethod } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { describe, expect, it } from 'vitest';
import { ADMIN_CONTROLLERS } from './admin-api.module';
import { ADMIN_ROUTE, type AdminRouteSpec } from './admin-route';
import { AdminGuard } from './admin.guard';
import { ADMIN_OPENAPI } from './openapi';

interface Route {
  key: string;
  spec: AdminRouteSpec | undefined;
  guarded: boolean;
}

/** Every handler of the admin controllers: `METHOD /path` with its declared route spec. */
function routes(): Route[] {
  return ADMIN_CONTROLLERS.flatMap((controller) => {
    const base = String(Reflect.getMetadata(PATH_METADATA, controller));
    const guards = (Reflect.getMetadata(GUARDS_METADATA, controller) ?? []) as unknown[];
    const proto = controller.prototype as unknown as Record<string, unknown>;
    return Object.getOwnPropertyNames(proto)
      .filter((name) => name !== 'constructor' && typeof proto[name] === 'function')
      .flatMap((name) => {
        const handler = proto[name] as object;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) {
          return [];
        }
        const sub = String(Reflect.getMetadata(PATH_METADATA, handler) ?? '/');
        const path = `/${base}/${sub}`
          .replace(/\/+/g, '/')
          .replace(/\/$/, '')
          .replace(/:(\w+)/g, '{$1}');
        return [
          {
            key: `${RequestMethod[method].toLowerCase()} ${path}`,
            spec: Reflect.getMetadata(ADMIN_ROUTE, handler) as AdminRouteSpec | undefined,
            guarded: guards.includes(AdminGuard),
          },
        ];
      });
  });
}

describe('the admin API routes', () => {
  it('each declare an operation and a permission, behind the guard', () => {
    const found = routes();
    expect(found.length).toBeGreaterThan(20);
    expect(found.filter((r) => !r.spec || !r.guarded).map((r) => r.key)).toEqual([]);
  });

  it('are exactly the operations of the OpenAPI document, with the same ids and permissions', () => {
    const documented = Object.entries(ADMIN_OPENAPI.paths).flatMap(([path, methods]) =>
      Object.entries(
        methods as Record<string, { operationId: string; 'x-permission': string }>,
      ).map(([method, op]) => ({
        key: `${method} ${path}`,
        operation: op.operationId,
        permission: op['x-permission'],
      })),
    );
    const served = routes().map((r) => ({
      key: r.key,
      operation: r.spec?.operation,
      permission: r.spec?.permission,
    }));
    const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);
    expect(served.sort(byKey)).toEqual(documented.sort(byKey));
  });

  it('are described by the checked-in docs/admin-api.openapi.json (vitest -u rewrites it)', async () => {
    await expect(`${JSON.stringify(ADMIN_OPENAPI, null, 2)}\n`).toMatchFileSnapshot(
      '../../../docs/admin-api.openapi.json',
    );
  });
});
