/**
 * JSON Canonicalization Scheme (RFC 8785), the payload form of Agent Card signatures (spec digest §10.12):
 * no whitespace, object members sorted by the UTF-16 code units of their names, numbers and strings
 * serialised as ECMAScript's `JSON.stringify` does (RFC 8785 §3.2.2 adopts exactly that algorithm).
 *
 * Input is a JSON value: `null`, booleans, finite numbers, strings, arrays and plain objects. Members whose
 * value is `undefined` are left out, as `JSON.stringify` does (an unset optional field is absent). Anything
 * that has no I-JSON form (RFC 7493) is rejected with a `TypeError`: non-finite numbers, lone surrogates,
 * `undefined` outside an object member, bigints, functions, symbols and non-plain objects.
 */
export function canonicalize(value: unknown): string {
  return serialize(value, '$');
}

/** A lone (unpaired) UTF-16 surrogate: with the `u` flag a proper pair is one astral code point. */
const LONE_SURROGATE = /\p{Cs}/u;

function serialize(value: unknown, path: string): string {
  if (value === null || typeof value === 'boolean') {
    return String(value);
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      throw new TypeError(`${path}: ${value} has no JSON form`);
    }
    // ECMAScript Number::toString, which also turns -0 into "0" (RFC 8785 §3.2.2.3).
    return String(value);
  }
  if (typeof value === 'string') {
    return serializeString(value, path);
  }
  if (Array.isArray(value)) {
    return `[${value.map((item, i) => serialize(item, `${path}[${i}]`)).join(',')}]`;
  }
  if (typeof value === 'object') {
    return serializeObject(value, path);
  }
  throw new TypeError(`${path}: a ${typeof value} has no JSON form`);
}

function serializeString(value: string, path: string): string {
  if (LONE_SURROGATE.test(value)) {
    throw new TypeError(`${path}: a string with a lone surrogate is not I-JSON`);
  }
  // JSON.stringify of a well-formed string is RFC 8785 §3.2.2.2 exactly: `"` and `\` escaped, the short
  // forms \b \t \n \f \r, other controls as \u00xx (lowercase hex), everything else as is.
  return JSON.stringify(value);
}

function serializeObject(value: object, path: string): string {
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) {
    throw new TypeError(`${path}: only plain objects have a JSON form`);
  }
  const record = value as Record<string, unknown>;
  // The default sort compares UTF-16 code units, which is RFC 8785 §3.2.3's order.
  const members = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${serializeString(key, path)}:${serialize(record[key], `${path}.${key}`)}`);
  return `{${members.join(',')}}`;
}
