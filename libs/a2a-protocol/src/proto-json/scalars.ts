/**
 * Scalar normalisation, exported for bindings that read values outside a message (e.g. REST query params),
 * and the JSON value checks the decoder shares with them.
 */

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
/** The range of `google.protobuf.Timestamp`: 0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999Z. */
const MIN_TIMESTAMP_MS = -62_135_596_800_000;
const MAX_TIMESTAMP_MS = 253_402_300_799_999;

/**
 * Parses an RFC 3339 timestamp (any offset, up to nanosecond fraction) and returns it in UTC as
 * `YYYY-MM-DDTHH:mm:ss.sssZ` (digest §3), or `undefined` when it is not a valid timestamp.
 * Sub-millisecond digits are truncated.
 */
export function normalizeTimestamp(text: string): string | undefined {
  const match = RFC3339.exec(text);
  if (match === null) {
    return undefined;
  }
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((match[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offsetHours = Number(match[9] ?? '0');
  const offsetMinutes = Number(match[10] ?? '0');
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    offsetHours > 23 ||
    offsetMinutes > 59
  ) {
    return undefined;
  }
  const local = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 onto 1900–1999.
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, millis);
  const sign = match[8] === '-' ? -1 : 1;
  const utc = local.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
  if (utc < MIN_TIMESTAMP_MS || utc > MAX_TIMESTAMP_MS) {
    return undefined;
  }
  return new Date(utc).toISOString();
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Accepts standard or URL-safe base64, padded or not (never a mix of alphabets), and returns the standard
 * padded form (digest §3 `bytes`), or `undefined` when the text is not base64.
 */
export function normalizeBase64(text: string): string | undefined {
  const match = /^([A-Za-z0-9+/_-]*)(={0,2})$/.exec(text);
  if (match === null) {
    return undefined;
  }
  const body = match[1] ?? '';
  const padding = (match[2] ?? '').length;
  const mixedAlphabets = /[+/]/.test(body) && /[-_]/.test(body);
  const remainder = body.length % 4;
  if (mixedAlphabets || remainder === 1 || (padding > 0 && padding !== (4 - remainder) % 4)) {
    return undefined;
  }
  // Re-encoding also canonicalises non-zero trailing bits.
  return Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('base64');
}

/** A JSON object: not null, not an array, not a class instance. */
export function isPlainObject(value: unknown): value is { [key: string]: unknown } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return false;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
