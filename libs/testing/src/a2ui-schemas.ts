import addFormats from 'ajv-formats';
import Ajv2020 from 'ajv/dist/2020';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './platform-processes';

/** Where the schemas' relative `$ref`s resolve: `catalog.json`, `client_to_server.json`, … */
const SCHEMA_BASE = 'https://a2ui.org/specification/v0_9/';

/** The schemas a test checks a value against (file names without `.json` in `src/v0_9/schemas/`). */
export type A2uiSchemaName =
  | 'server_to_client'
  | 'server_to_client_list'
  | 'client_to_server'
  | 'client_to_server_list'
  | 'client_capabilities'
  | 'server_capabilities';

/** Validates values against the A2UI v0.9 JSON schemas (draft 2020-12). */
export interface A2uiSchemas {
  /** The violations of `value` against the schema, one line each; empty when it is valid. */
  errors(schema: A2uiSchemaName, value: unknown): string[];
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/**
 * Every v0.9 schema of `@a2ui/web_core` loaded into one validator, so that their references resolve: the
 * message schemas reference `catalog.json` (the catalog the surface uses; here the basic catalog) and
 * `common_types.json`; `client_to_server.json` has no `$id` and is registered under the name its list
 * schema references.
 */
export function loadA2uiSchemas(): A2uiSchemas {
  const dir = join(repoRoot(), 'node_modules', '@a2ui', 'web_core', 'src', 'v0_9', 'schemas');
  // Not strict: that mode checks how a schema is written (it refuses `required` names declared in a sibling
  // subschema, which these do), and it would not ignore the OpenAPI `discriminator` annotation of the catalogs.
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
    ajv.addSchema(readJson(join(dir, file)), `${SCHEMA_BASE}${file}`);
  }
  for (const catalog of readdirSync(join(dir, 'catalogs'))) {
    ajv.addSchema(readJson(join(dir, 'catalogs', catalog, 'catalog.json')));
  }
  const basic = readJson(join(dir, 'catalogs', 'basic', 'catalog.json'));
  ajv.addSchema({ ...basic, $id: `${SCHEMA_BASE}catalog.json` });
  return {
    errors(schema, value) {
      const validate = ajv.getSchema(`${SCHEMA_BASE}${schema}.json`);
      if (!validate) {
        throw new Error(`no A2UI schema ${schema}`);
      }
      return validate(value)
        ? []
        : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
    },
  };
}
