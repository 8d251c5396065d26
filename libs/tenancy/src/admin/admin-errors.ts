import type { z } from 'zod';

/** A field of a request and what is wrong with it. */
export interface FieldError {
  field: string;
  description: string;
}

/** Bad input to an admin operation: nothing was changed. The admin API answers 400 with the fields. */
export class InvalidInput extends Error {
  override readonly name = 'InvalidInput';

  constructor(
    message: string,
    readonly fields: readonly FieldError[] = [],
  ) {
    super(message);
  }
}

/** The named thing does not exist (in that tenant): 404. */
export class NotFound extends Error {
  override readonly name = 'NotFound';
}

/** The operation does not fit the current state (a tenant that exists already, a purge not requested): 409. */
export class Conflict extends Error {
  override readonly name = 'Conflict';
}

/** `value` as the schema's output, or InvalidInput naming every bad field (paths joined with dots). */
export function parseInput<T>(
  schema: z.ZodType<T, z.ZodTypeDef, unknown>,
  value: unknown,
  what: string,
): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) {
    return parsed.data;
  }
  const fields = parsed.error.issues.map((issue) => ({
    field: issue.path.join('.') || '(body)',
    description: issue.message,
  }));
  throw new InvalidInput(
    `invalid ${what}: ${fields.map((f) => `${f.field}: ${f.description}`).join('; ')}`,
    fields,
  );
}

/** A row named another that does not exist (SQLSTATE 23503): the tenant or agent it belongs to is gone. */
export function isForeignKeyViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23503';
}
