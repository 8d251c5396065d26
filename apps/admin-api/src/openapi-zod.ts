import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// `.openapi(…)` on every zod schema (a component name, documentation the validation does not carry): the
// document's modules take `z` from here, so that it is in place before they name their first schema.
extendZodWithOpenApi(z);

export { z };
