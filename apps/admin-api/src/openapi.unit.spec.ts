import { InvalidInput, OIDC_ISSUER_FIELDS, validateOidcIssuer } from '@lib/tenancy';
import { RequestMethod } from '@nestjs/common';
import {
  GUARDS_METADATA,
  HTTP_CODE_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
} from '@nestjs/common/constants';
import addFormats from 'ajv-formats';
import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import { ADMIN_CONTROLLERS } from './admin-api.module';
import { adminError } from './admin-errors.filter';
import { ADMIN_ROUTE, type AdminRouteSpec } from './admin-route';
import { AdminGuard } from './admin.guard';
import { ADMIN_OPENAPI } from './openapi';

interface Route {
  key: string;
  spec: AdminRouteSpec | undefined;
  guarded: boolean;
  /** What Nest answers on success unless the handler sets the status itself. */
  status: number;
}

interface DocumentedOperation {
  operationId: string;
  'x-permission': string;
  responses: Record<string, unknown>;
}

/** Every operation of the document, keyed like {@link routes}. */
function documented(): { key: string; operation: DocumentedOperation }[] {
  return Object.entries(ADMIN_OPENAPI.paths ?? {}).flatMap(([path, methods]) =>
    Object.entries(methods as Record<string, DocumentedOperation>).map(([method, operation]) => ({
      key: `${method} ${path}`,
      operation,
    })),
  );
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
        const code = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
        return [
          {
            key: `${RequestMethod[method].toLowerCase()} ${path}`,
            spec: Reflect.getMetadata(ADMIN_ROUTE, handler) as AdminRouteSpec | undefined,
            guarded: guards.includes(AdminGuard),
            status: code ?? (method === RequestMethod.POST ? 201 : 200),
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
    const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);
    const served = routes().map((r) => ({
      key: r.key,
      operation: r.spec?.operation,
      permission: r.spec?.permission,
    }));
    const operations = documented().map(({ key, operation }) => ({
      key,
      operation: operation.operationId,
      permission: operation['x-permission'],
    }));
    expect(served.sort(byKey)).toEqual(operations.sort(byKey));
  });

  it('answer with a status the document gives for them', () => {
    const statuses = new Map(
      documented().map(({ key, operation }) => [key, Object.keys(operation.responses)]),
    );
    const undocumented = routes().filter((r) => !statuses.get(r.key)?.includes(String(r.status)));
    expect(undocumented.map((r) => `${r.key} ${r.status}`)).toEqual([]);
  });
  it('are described by the checked-in docs/admin-api.openapi.json (vitest -u rewrites it)', async () => {
    await expect(`${JSON.stringify(ADMIN_OPENAPI, null, 2)}\n`).toMatchFileSnapshot(
      '../../../docs/admin-api.openapi.json',
    );
  });
});

/** The document's component schemas, for Ajv to resolve `admin#/components/schemas/<name>`. */
function componentSchemas(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addSchema({ components: ADMIN_OPENAPI.components }, 'admin');
  return ajv;
}

describe('the OpenAPI document', () => {
  it('has JSON Schemas (2020-12, the dialect of OpenAPI 3.1) whose every reference resolves', () => {
    const ajv = componentSchemas();
    const schemas = Object.entries(ADMIN_OPENAPI.components?.schemas ?? {});
    expect(schemas.length).toBeGreaterThan(30);
    for (const [name, schema] of schemas) {
      expect(ajv.validateSchema(schema), name).toBe(true);
    }
    const refs = [...JSON.stringify(ADMIN_OPENAPI).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
    for (const ref of new Set(refs)) {
      expect(ajv.getSchema(`admin${ref}`), ref).toBeDefined();
    }
  });

  it('describes the error body the admin API answers', () => {
    const validError = componentSchemas().getSchema('admin#/components/schemas/Error');
    const invalid = adminError(new InvalidInput('bad', [{ field: 'name', description: 'empty' }]));
    expect(validError?.(invalid.body)).toBe(true);
    expect(validError?.({ error: { code: 400 } })).toBe(false);
  });

  it('describes the issuer body as validateOidcIssuer checks it: its fields, required ones and defaults', () => {
    const schema = ADMIN_OPENAPI.components?.schemas?.OidcIssuerDefinition as {
      properties: Record<string, { default?: unknown }>;
      required: string[];
      additionalProperties: boolean;
    };
    expect(Object.keys(schema.properties).sort()).toEqual([...OIDC_ISSUER_FIELDS].sort());
    expect(schema.additionalProperties).toBe(false);
    const missing = validateOidcIssuer({});
    expect(missing.ok).toBe(false);
    const required = missing.ok ? [] : missing.errors.map((e) => e.field);
    expect([...schema.required].sort()).toEqual(required.sort());
    const minimal = validateOidcIssuer({
      issuer: 'https://login.example.com',
      audience: 'a2a',
      jwksUrl: 'https://login.example.com/jwks',
    });
    expect(minimal.ok).toBe(true);
    const filled = minimal.ok ? minimal.issuer : undefined;
    expect(schema.properties.principalClaim?.default).toBe(filled?.principalClaim);
    expect(schema.properties.scopesClaim?.default).toBe(filled?.scopesClaim);
    expect(schema.properties.scopeMap?.default).toEqual(filled?.scopeMap);
  });
});
