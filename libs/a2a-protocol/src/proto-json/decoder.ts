/**
 * A small descriptor-driven ProtoJSON decoder for A2A request messages (spec digest §3, §4).
 *
 * Each message is described as data ({@link MessageDescriptor}); one generic {@link decode} walks untrusted
 * input against a descriptor, collects every violation with its path (`message.parts[1].raw`) and either
 * returns the canonical object (camelCase keys, enum names, normalised timestamps and base64) or throws a
 * single `INVALID_PARAMS` {@link A2aError} carrying all of them.
 */
import { A2aError, type FieldViolation, invalidParams } from '../errors';
import type { JsonObject, JsonValue } from '../model';
import {
  DEFAULT_PROTO_JSON_LIMITS,
  type DecodedMessage,
  type FieldDescriptor,
  type FieldKind,
  type MessageDescriptor,
  type ProtoJsonLimits,
} from './descriptor';
import { isPlainObject, normalizeBase64, normalizeTimestamp } from './scalars';

/**
 * Decodes `input` against `descriptor`. `path` prefixes every violation path (`''` for a request's root).
 * Throws one `INVALID_PARAMS` error listing every violation.
 */
export function decode(
  descriptor: MessageDescriptor,
  input: unknown,
  path: string,
  limits: Partial<ProtoJsonLimits> = {},
): DecodedMessage {
  const resolved = { ...DEFAULT_PROTO_JSON_LIMITS, ...limits };
  const ctx: DecodeContext = {
    limits: resolved,
    violations: new Violations(resolved.maxViolations),
  };
  const value = decodeMessageValue(descriptor, input, path, ctx);
  const violations = ctx.violations.toArray();
  if (violations.length > 0 || value === undefined) {
    throw invalidParams(violations);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------
// The walker.

interface DecodeContext {
  readonly limits: ProtoJsonLimits;
  readonly violations: Violations;
}

class Violations {
  private readonly list: FieldViolation[] = [];
  private dropped = 0;

  constructor(private readonly max: number) {}

  add(field: string, description: string): void {
    if (this.list.length < this.max) {
      this.list.push({ field, description });
    } else {
      this.dropped += 1;
    }
  }

  toArray(): FieldViolation[] {
    return this.dropped === 0
      ? this.list
      : [...this.list, { field: '', description: `${this.dropped} further violations not listed` }];
  }
}

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

function decodeMessageValue(
  descriptor: MessageDescriptor,
  input: unknown,
  path: string,
  ctx: DecodeContext,
): DecodedMessage | undefined {
  if (!isPlainObject(input)) {
    const got = input === undefined ? 'nothing' : describeType(input);
    ctx.violations.add(path, `must be a JSON object (${descriptor.name}), got ${got}`);
    return undefined;
  }
  const output: DecodedMessage = {};
  const oneofMembers = new Map<string, string[]>();
  for (const fd of descriptor.fields) {
    const fieldPath = join(path, fd.json);
    const raw = readField(input, fd, fieldPath, ctx);
    // ProtoJSON: null means absent, except for a Value, where it is the JSON null value.
    if (raw === undefined || (raw === null && fd.kind.type !== 'value')) {
      if (fd.required) {
        ctx.violations.add(fieldPath, 'is required');
      }
      continue;
    }
    if (fd.oneof !== undefined) {
      const members = oneofMembers.get(fd.oneof) ?? [];
      members.push(fd.json);
      oneofMembers.set(fd.oneof, members);
    }
    const decoded = decodeField(fd, raw, fieldPath, ctx);
    if (decoded === undefined) {
      continue;
    }
    if (isDefault(fd, decoded.value)) {
      if (fd.required) {
        ctx.violations.add(fieldPath, requiredDescription(fd));
        continue;
      }
      if (!hasPresence(fd)) {
        continue;
      }
    }
    output[fd.json] = decoded.value;
  }
  checkOneofs(descriptor, oneofMembers, path, ctx);
  for (const rule of descriptor.rules ?? []) {
    rule(output, (field, description) => ctx.violations.add(join(path, field), description));
  }
  return output;
}

function readField(
  input: { [key: string]: unknown },
  fd: FieldDescriptor,
  fieldPath: string,
  ctx: DecodeContext,
): unknown {
  const camel = own(input, fd.json);
  const snake = fd.proto === fd.json ? undefined : own(input, fd.proto);
  if (camel !== undefined && snake !== undefined) {
    ctx.violations.add(fieldPath, `is set twice, as "${fd.proto}" and as "${fd.json}"`);
  }
  // Not `??`: a JSON null must survive, it is a value for `google.protobuf.Value` fields.
  return camel !== undefined ? camel : snake;
}

function checkOneofs(
  descriptor: MessageDescriptor,
  oneofMembers: ReadonlyMap<string, readonly string[]>,
  path: string,
  ctx: DecodeContext,
): void {
  const groups = new Set(
    descriptor.fields.flatMap((fd) => (fd.oneof === undefined ? [] : [fd.oneof])),
  );
  for (const group of groups) {
    const names = descriptor.fields.filter((fd) => fd.oneof === group).map((fd) => fd.json);
    const set = oneofMembers.get(group) ?? [];
    if (set.length > 1) {
      ctx.violations.add(
        path,
        `only one of ${names.join(', ')} may be set (oneof ${group}), got ${set.join(', ')}`,
      );
    } else if (set.length === 0 && descriptor.requiredOneofs?.includes(group)) {
      ctx.violations.add(path, `exactly one of ${names.join(', ')} must be set (oneof ${group})`);
    }
  }
}

/** Returns `undefined` when the value was rejected (the violation is already recorded). */
function decodeField(
  fd: FieldDescriptor,
  raw: unknown,
  path: string,
  ctx: DecodeContext,
): { value: unknown } | undefined {
  const cardinality = fd.cardinality ?? 'singular';
  switch (cardinality) {
    case 'singular': {
      const value = decodeSingular(fd.kind, raw, path, ctx);
      return value === undefined ? undefined : checkSingular(fd, value, path, ctx);
    }
    case 'repeated':
      return decodeRepeated(fd, raw, path, ctx);
    case 'map':
      return decodeMap(fd, raw, path, ctx);
    default:
      return assertNever(cardinality);
  }
}

function decodeRepeated(
  fd: FieldDescriptor,
  raw: unknown,
  path: string,
  ctx: DecodeContext,
): { value: unknown[] } | undefined {
  if (!Array.isArray(raw)) {
    ctx.violations.add(path, `must be a JSON array, got ${describeType(raw)}`);
    return undefined;
  }
  if (fd.limit === 'maxPartsPerMessage' && raw.length > ctx.limits.maxPartsPerMessage) {
    // Do not walk an oversized list: that is the cost the limit is there to avoid.
    ctx.violations.add(
      path,
      `has ${raw.length} parts; at most ${ctx.limits.maxPartsPerMessage} allowed`,
    );
    return undefined;
  }
  const items: unknown[] = [];
  let ok = true;
  raw.forEach((item: unknown, index) => {
    const itemPath = `${path}[${index}]`;
    if (item === null || item === undefined) {
      ctx.violations.add(itemPath, 'must not be null');
      ok = false;
      return;
    }
    const value = decodeSingular(fd.kind, item, itemPath, ctx);
    const checked = value === undefined ? undefined : checkSingular(fd, value, itemPath, ctx);
    if (checked === undefined) {
      ok = false;
    } else {
      items.push(checked.value);
    }
  });
  return ok ? { value: items } : undefined;
}

function decodeMap(
  fd: FieldDescriptor,
  raw: unknown,
  path: string,
  ctx: DecodeContext,
): { value: { [key: string]: unknown } } | undefined {
  if (!isPlainObject(raw)) {
    ctx.violations.add(path, `must be a JSON object, got ${describeType(raw)}`);
    return undefined;
  }
  const entries: [string, unknown][] = [];
  let ok = true;
  for (const [key, item] of Object.entries(raw)) {
    const entryPath = `${path}[${JSON.stringify(key)}]`;
    if (item === null) {
      ctx.violations.add(entryPath, 'must not be null');
      ok = false;
      continue;
    }
    const value = decodeSingular(fd.kind, item, entryPath, ctx);
    if (value === undefined) {
      ok = false;
    } else {
      entries.push([key, value]);
    }
  }
  // fromEntries defines own properties, so a "__proto__" key stays data.
  return ok ? { value: Object.fromEntries(entries) } : undefined;
}

/** Range and limit checks for a decoded singular value. */
function checkSingular(
  fd: FieldDescriptor,
  value: unknown,
  path: string,
  ctx: DecodeContext,
): { value: unknown } | undefined {
  if (typeof value === 'number' && !withinBounds(fd, value)) {
    ctx.violations.add(path, `${boundsDescription(fd)}, got ${value}`);
    return undefined;
  }
  if (
    (fd.limit === 'maxTextPartLength' || fd.limit === 'maxIdLength') &&
    typeof value === 'string'
  ) {
    const max = ctx.limits[fd.limit];
    if (value.length > max) {
      ctx.violations.add(path, `is ${value.length} characters long; at most ${max} allowed`);
      return undefined;
    }
  }
  if (fd.limit === 'maxMetadataBytes') {
    const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
    if (bytes > ctx.limits.maxMetadataBytes) {
      ctx.violations.add(
        path,
        `is ${bytes} bytes of JSON; at most ${ctx.limits.maxMetadataBytes} allowed`,
      );
      return undefined;
    }
  }
  return { value };
}

/** Decodes one non-null value of `kind`; returns `undefined` after recording a violation. */
function decodeSingular(kind: FieldKind, raw: unknown, path: string, ctx: DecodeContext): unknown {
  const reject = (description: string): undefined => {
    ctx.violations.add(path, description);
    return undefined;
  };
  switch (kind.type) {
    case 'string': {
      if (typeof raw !== 'string') {
        return reject(`must be a string, got ${describeType(raw)}`);
      }
      const problem = stringProblem(raw);
      return problem === undefined ? raw : reject(problem);
    }
    case 'bool':
      return typeof raw === 'boolean'
        ? raw
        : reject(`must be true or false, got ${describeType(raw)}`);
    case 'int32': {
      const value = toInt32(raw);
      return value ?? reject(`must be a 32-bit integer, got ${describeValue(raw)}`);
    }
    case 'enum':
      return decodeEnum(kind.values, raw) ?? reject(enumDescription(kind.name, kind.values, raw));
    case 'message':
      return decodeMessageValue(kind.descriptor, raw, path, ctx);
    case 'struct': {
      if (!isPlainObject(raw)) {
        return reject(`must be a JSON object, got ${describeType(raw)}`);
      }
      const problem = jsonProblem(raw, 0, ctx.limits.maxJsonDepth);
      return problem === undefined ? (raw as JsonObject) : reject(problem);
    }
    case 'value': {
      const problem = jsonProblem(raw, 0, ctx.limits.maxJsonDepth);
      return problem === undefined ? (raw as JsonValue) : reject(problem);
    }
    case 'timestamp': {
      const value = typeof raw === 'string' ? normalizeTimestamp(raw) : undefined;
      return value ?? reject('must be an RFC 3339 timestamp such as 2026-01-01T00:00:00Z');
    }
    case 'bytes': {
      const value = typeof raw === 'string' ? normalizeBase64(raw) : undefined;
      return value ?? reject('must be base64 (standard or URL-safe alphabet)');
    }
    default:
      return assertNever(kind);
  }
}

function withinBounds(fd: FieldDescriptor, value: number): boolean {
  return (fd.min === undefined || value >= fd.min) && (fd.max === undefined || value <= fd.max);
}

function boundsDescription(fd: FieldDescriptor): string {
  if (fd.min !== undefined && fd.max !== undefined) {
    return `must be between ${fd.min} and ${fd.max}`;
  }
  return fd.min !== undefined ? `must be at least ${fd.min}` : `must be at most ${fd.max ?? ''}`;
}

/** A JSON number's text (RFC 8259 §6): no plus sign, no leading zeros, no surrounding whitespace. */
const JSON_NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * An int32 per ProtoJSON (digest §3): a JSON number or a string holding a JSON number, either way with an
 * integral value in range (`1e2`, `"100.0"` and `-0` are 100, 100 and 0; `1.5`, `"NaN"`, `" 1"` are not).
 */
function toInt32(raw: unknown): number | undefined {
  let value: number | undefined;
  if (typeof raw === 'number') {
    value = raw;
  } else if (typeof raw === 'string') {
    value = integerText(raw);
  }
  return value !== undefined && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX
    ? value + 0 // -0 becomes 0
    : undefined;
}

/**
 * The exact integer a JSON number text denotes, or `undefined` when it has a fractional part or more than
 * ten significant digits (beyond int32 either way). Exact, unlike `Number("1.0000000000000000001")`.
 */
function integerText(text: string): number | undefined {
  const match = JSON_NUMBER.exec(text);
  if (match === null) {
    return undefined;
  }
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  let scale = Number(exponent) - fraction.length;
  if (digits === '') {
    return 0;
  }
  const trailingZeros = /0*$/.exec(digits)?.[0].length ?? 0;
  digits = digits.slice(0, digits.length - trailingZeros);
  scale += trailingZeros;
  if (scale < 0 || digits.length + scale > 10) {
    return undefined;
  }
  return Number(`${sign}${digits}${'0'.repeat(scale)}`);
}

/** Enum values arrive as their full proto name or their number (digest §3, §5). */
function decodeEnum(values: readonly string[], raw: unknown): string | undefined {
  if (typeof raw === 'string') {
    return values.includes(raw) ? raw : undefined;
  }
  if (typeof raw === 'number' && Number.isInteger(raw)) {
    return values[raw];
  }
  return undefined;
}

function enumDescription(name: string, values: readonly string[], raw: unknown): string {
  if (typeof raw === 'string') {
    // "completed" / "input-required" / "user" are the 0.3 spellings (digest §11).
    const prefix = (values[0] ?? '').replace(/UNSPECIFIED$/, '');
    const suggestion = `${prefix}${raw.toUpperCase().replace(/-/g, '_')}`;
    const hint = values.includes(suggestion) ? `; A2A 1.0 spells it ${suggestion}` : '';
    return `"${raw}" is not a ${name} value${hint}`;
  }
  return `must be a ${name} name or number (0–${values.length - 1}), got ${describeValue(raw)}`;
}

const NUL = '\u0000';
/** Task documents are stored as Postgres jsonb, which cannot hold U+0000: refuse it up front. */
const NUL_PROBLEM = 'contains the character U+0000, which is not accepted';
/** An unpaired surrogate is not Unicode: Postgres refuses it in jsonb, and UTF-8 cannot carry it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const SURROGATE_PROBLEM = 'contains an unpaired UTF-16 surrogate, which is not valid Unicode';

/** Why a string cannot be stored as sent, or `undefined` when it can. */
function stringProblem(text: string): string | undefined {
  if (text.includes(NUL)) {
    return NUL_PROBLEM;
  }
  return LONE_SURROGATE.test(text) ? SURROGATE_PROBLEM : undefined;
}

/** Why `value` is not acceptable JSON for a Struct or Value, or `undefined` when it is. */
function jsonProblem(value: unknown, depth: number, maxDepth: number): string | undefined {
  if (typeof value === 'string') {
    return stringProblem(value);
  }
  if (value === null || typeof value === 'boolean') {
    return undefined;
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? undefined : 'contains a number that is not finite';
  }
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) {
    return `contains ${describeType(value)}, which is not JSON`;
  }
  if (depth >= maxDepth) {
    return `nests deeper than ${maxDepth} levels`;
  }
  if (!isArray) {
    const keyProblem = Object.keys(value)
      .map(stringProblem)
      .find((problem) => problem !== undefined);
    if (keyProblem !== undefined) {
      return keyProblem;
    }
  }
  const children: unknown[] = isArray ? value : Object.values(value);
  for (const child of children) {
    const problem = jsonProblem(child, depth + 1, maxDepth);
    if (problem !== undefined) {
      return problem;
    }
  }
  return undefined;
}

function isDefault(fd: FieldDescriptor, value: unknown): boolean {
  if (Array.isArray(value)) {
    return value.length === 0;
  }
  if (fd.cardinality === 'map') {
    return isPlainObject(value) && Object.keys(value).length === 0;
  }
  return isDefaultValue(fd.kind, value);
}

/**
 * Whether one value of a field of this kind is the proto3 default (ProtoJSON omits it without presence):
 * zero-like scalars and the first enum value (by name or number). A message, Struct, Value or Timestamp that
 * is set is never a default.
 */
export function isDefaultValue(kind: FieldKind, value: unknown): boolean {
  switch (kind.type) {
    case 'string':
    case 'bytes':
      return value === '';
    case 'int32':
      return value === 0;
    case 'bool':
      return value === false;
    case 'enum':
      return value === kind.values[0] || value === 0;
    case 'message':
    case 'struct':
    case 'value':
    case 'timestamp':
      return false;
    default:
      return assertNever(kind);
  }
}

/** Message-typed fields and oneof members always have presence in proto3; scalars only with `optional`. */
function hasPresence(fd: FieldDescriptor): boolean {
  return fd.presence === true || fd.oneof !== undefined;
}

function requiredDescription(fd: FieldDescriptor): string {
  if (fd.cardinality === 'repeated') {
    return 'is required and must have at least one element';
  }
  if (fd.kind.type === 'enum') {
    return `is required and must not be ${fd.kind.values[0] ?? 'unspecified'}`;
  }
  return 'is required and must not be empty';
}

function own(input: { [key: string]: unknown }, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(input, key) ? input[key] : undefined;
}

function describeType(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  const type = typeof value;
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describeValue(value: unknown): string {
  return typeof value === 'number' || typeof value === 'string'
    ? JSON.stringify(value)
    : describeType(value);
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function assertNever(value: never): never {
  throw new A2aError('INTERNAL', `unhandled descriptor case ${JSON.stringify(value)}`);
}
