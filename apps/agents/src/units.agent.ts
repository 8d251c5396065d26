import type { JsonValue, Part } from '@lib/a2a-protocol';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@lib/worker-sdk';
import { joinedText } from './message-text';

export type Dimension = 'length' | 'mass' | 'temperature';

/**
 * A unit as an affine map to its dimension's base unit (metre, gram, kelvin): `base = value * scale + offset`.
 * The offset is 0 for every unit but °C and °F, so one formula covers factors and temperatures alike.
 */
export interface Unit {
  /** The canonical name, as written in requests and in the table's data part. */
  readonly symbol: string;
  /** How answers and the CSV header write it. */
  readonly label: string;
  readonly dimension: Dimension;
  readonly scale: number;
  readonly offset: number;
  /** Other names accepted in requests. */
  readonly aliases: readonly string[];
}

const defineUnit = (
  symbol: string,
  dimension: Dimension,
  scale: number,
  aliases: readonly string[],
  { label = symbol, offset = 0 }: { label?: string; offset?: number } = {},
): Unit => ({ symbol, label, dimension, scale, offset, aliases });

/** Every unit the agent knows, by dimension; the factors are the exact international definitions. */
export const UNITS: readonly Unit[] = [
  defineUnit('km', 'length', 1_000, ['kilometer', 'kilometers', 'kilometre', 'kilometres']),
  defineUnit('m', 'length', 1, ['meter', 'meters', 'metre', 'metres']),
  defineUnit('cm', 'length', 0.01, ['centimeter', 'centimeters', 'centimetre', 'centimetres']),
  defineUnit('mi', 'length', 1_609.344, ['mile', 'miles']),
  defineUnit('ft', 'length', 0.3048, ['foot', 'feet']),
  defineUnit('in', 'length', 0.0254, ['inch', 'inches']),
  defineUnit('kg', 'mass', 1_000, ['kilogram', 'kilograms']),
  defineUnit('g', 'mass', 1, ['gram', 'grams']),
  defineUnit('lb', 'mass', 453.592_37, ['lbs', 'pound', 'pounds']),
  defineUnit('oz', 'mass', 28.349_523_125, ['ounce', 'ounces']),
  defineUnit('c', 'temperature', 1, ['°c', 'celsius'], { label: '°C', offset: 273.15 }),
  defineUnit('f', 'temperature', 5 / 9, ['°f', 'fahrenheit'], {
    label: '°F',
    offset: 273.15 - (32 * 5) / 9,
  }),
  defineUnit('k', 'temperature', 1, ['kelvin'], { label: 'K' }),
];

const BY_NAME: ReadonlyMap<string, Unit> = new Map(
  UNITS.flatMap((u) => [u.symbol, ...u.aliases].map((name) => [name, u] as const)),
);

/** The unit a request names (any case), or undefined. */
export function findUnit(name: string): Unit | undefined {
  return BY_NAME.get(name.toLowerCase());
}

/** `value` in `from`, expressed in `to` (same dimension). */
export function convert(value: number, from: Unit, to: Unit): number {
  return (value * from.scale + from.offset - to.offset) / to.scale;
}

/**
 * At most 4 decimals, without trailing zeros or an exponent (below 1e21). Values below 1 keep 4 significant
 * digits instead (`0.0000254`), so that small lengths do not read as 0, but no more than 10 decimals: below
 * that lies the rounding noise of the temperature offsets (32 °F is 2.8e-14 °C in binary floating point).
 */
export function formatNumber(value: number): string {
  const magnitude = Math.abs(value);
  const decimals =
    magnitude >= 1 || magnitude === 0 ? 4 : Math.min(10, 3 - Math.floor(Math.log10(magnitude)));
  const fixed = value.toFixed(decimals);
  const trimmed = fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
  return trimmed === '-0' ? '0' : trimmed;
}

export const MAX_TABLE_ROWS = 1_000;

export interface ConvertRequest {
  readonly kind: 'convert';
  readonly value: number;
  readonly from: Unit;
  readonly to: Unit;
}

/** The values `start`, `start ± step`, … up to `end` (counting down when `end < start`). */
export interface TableRequest {
  readonly kind: 'table';
  readonly from: Unit;
  readonly to: Unit;
  readonly start: number;
  readonly end: number;
  readonly step: number;
}

export interface InvalidRequest {
  readonly kind: 'invalid';
  /** Why, in one sentence for the user. */
  readonly reason: string;
}

export type UnitsRequest = ConvertRequest | TableRequest | InvalidRequest;

const NUMBER = String.raw`-?(?:\d+(?:\.\d+)?|\.\d+)`;
const UNIT = String.raw`[a-z°]+`;
const INTO = String.raw`(?:to|in|into|as|->)`;
const UNITS_PAIR = String.raw`(?<from>${UNIT}) ${INTO} (?<to>${UNIT})`;
const RANGE = String.raw`(?<start>${NUMBER}) ?(?:\.\.|-) ?(?<end>${NUMBER})`;
const STEP = String.raw`(?: step (?<step>${NUMBER}))?`;

/** `[convert] <number> <unit> to|in|into|as|-> <unit>`, on normalized text. */
const CONVERT = new RegExp(String.raw`^(?:convert )?(?<value>${NUMBER}) ?${UNITS_PAIR}$`);
/** `table <unit> to <unit> <start>..<end> [step <n>]` and `table <start>..<end> <unit> to <unit> [step <n>]`. */
const TABLE = [
  new RegExp(String.raw`^table ${UNITS_PAIR} ${RANGE}${STEP}$`),
  new RegExp(String.raw`^table ${RANGE} ?${UNITS_PAIR}${STEP}$`),
];

/** A named group of a match; '' when it did not take part. */
const group = (match: RegExpExecArray, name: string): string => match.groups?.[name] ?? '';

const invalid = (reason: string): InvalidRequest => ({ kind: 'invalid', reason });

/** Both units, when they exist and measure the same dimension; otherwise why not. */
function unitPair(match: RegExpExecArray): [Unit, Unit] | InvalidRequest {
  const [fromName, toName] = [group(match, 'from'), group(match, 'to')];
  const from = findUnit(fromName);
  const to = findUnit(toName);
  if (!from || !to) {
    const unknown = [from ? '' : fromName, to ? '' : toName].filter((name) => name !== '');
    return invalid(`Unknown unit ${unknown.map((name) => `'${name}'`).join(' and ')}.`);
  }
  if (from.dimension !== to.dimension) {
    return invalid(
      `${from.label} is a ${from.dimension} and ${to.label} a ${to.dimension}: they do not convert.`,
    );
  }
  return [from, to];
}

/** Below absolute zero (with a margin for the rounding of °F's offset). */
function belowAbsoluteZero(value: number, unit: Unit): boolean {
  return unit.dimension === 'temperature' && value * unit.scale + unit.offset < -1e-9;
}

/** How many rows a table has: `start` and every further step that does not pass `end`. */
export function tableRowCount(start: number, end: number, step: number): number {
  // The margin keeps `0..1 step 0.1` at 11 rows despite binary fractions.
  return Math.floor(Math.abs(end - start) / step + 1e-9) + 1;
}

/** Reads one request; the grammar is in {@link UNITS_HELP}. Case and extra spaces do not matter. */
export function parseUnitsRequest(text: string): UnitsRequest {
  const normalized = text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[?.!]+$/, '');
  if (normalized === '') {
    return invalid('Send the conversion as text.');
  }
  const single = CONVERT.exec(normalized);
  if (single) {
    return convertRequest(single);
  }
  const table = TABLE.map((form) => form.exec(normalized)).find((match) => match !== null);
  if (table) {
    return tableRequest(table);
  }
  return invalid(
    normalized.startsWith('table ') ? 'I could not read that table.' : 'I could not read that.',
  );
}

function convertRequest(match: RegExpExecArray): UnitsRequest {
  const pair = unitPair(match);
  if (!Array.isArray(pair)) {
    return pair;
  }
  const [from, to] = pair;
  const value = Number(group(match, 'value'));
  if (!Number.isFinite(value)) {
    return invalid('That number is too large.');
  }
  if (belowAbsoluteZero(value, from)) {
    return invalid(`${formatNumber(value)} ${from.label} is below absolute zero.`);
  }
  return { kind: 'convert', value, from, to };
}

function tableRequest(match: RegExpExecArray): UnitsRequest {
  const pair = unitPair(match);
  if (!Array.isArray(pair)) {
    return pair;
  }
  const [from, to] = pair;
  const [start, end] = [Number(group(match, 'start')), Number(group(match, 'end'))];
  const step = Number(group(match, 'step') || '1');
  if (![start, end, step].every(Number.isFinite)) {
    return invalid('That number is too large.');
  }
  if (step <= 0) {
    return invalid('The step must be greater than 0.');
  }
  const rows = tableRowCount(start, end, step);
  if (rows > MAX_TABLE_ROWS) {
    return invalid(`That table would have ${rows} rows; the limit is ${MAX_TABLE_ROWS}.`);
  }
  const lowest = Math.min(start, end);
  if (belowAbsoluteZero(lowest, from)) {
    return invalid(`${formatNumber(lowest)} ${from.label} is below absolute zero.`);
  }
  return { kind: 'table', from, to, start, end, step };
}

/** The answer to a single conversion: `10 km = 6.2137 mi`. */
export function conversionText({ value, from, to }: ConvertRequest): string {
  return `${formatNumber(value)} ${from.label} = ${formatNumber(convert(value, from, to))} ${to.label}`;
}

/** The table's rows, `[value, converted]`, both rounded as {@link formatNumber} writes them. */
export function tableRows({ from, to, start, end, step }: TableRequest): [number, number][] {
  const direction = end < start ? -1 : 1;
  return Array.from({ length: tableRowCount(start, end, step) }, (_, i) => {
    // Multiplied, not accumulated, so the error of a fractional step does not grow row by row.
    const value = start + direction * i * step;
    return [Number(formatNumber(value)), Number(formatNumber(convert(value, from, to)))];
  });
}

/** The table as CSV: a header of the two unit labels, then one line per row (lines end with LF). */
export function tableCsv(request: TableRequest, rows = tableRows(request)): string {
  const lines = rows.map(
    ([value, converted]) => `${formatNumber(value)},${formatNumber(converted)}`,
  );
  return [`${request.from.label},${request.to.label}`, ...lines].join('\n') + '\n';
}

/** The artifact's parts: the CSV text, and the same rows as data for programs. */
export function tableParts(request: TableRequest): Part[] {
  const rows = tableRows(request);
  const data: JsonValue = { from: request.from.symbol, to: request.to.symbol, rows };
  return [
    { text: tableCsv(request, rows), mediaType: 'text/csv' },
    { data, mediaType: 'application/json' },
  ];
}

const symbolsOf = (dimension: Dimension): string =>
  UNITS.filter((u) => u.dimension === dimension)
    .map((u) => u.symbol)
    .join(', ');

/** What the agent understands, after the reason a request was not understood. */
export const UNITS_HELP =
  `I convert lengths (${symbolsOf('length')}), masses (${symbolsOf('mass')}) and temperatures ` +
  `(${symbolsOf('temperature')}). One value: 'convert 10 km to mi' or '100 c in f'. A table: ` +
  `'table km to mi 1..100' or 'table 1-20 kg to lb', optionally with 'step 5' (at most ${MAX_TABLE_ROWS} rows).`;

export function helpText(reason: string): string {
  return `${reason} ${UNITS_HELP}`;
}

/** The table's one-line summary: `km to mi, 1..100 step 1 (100 rows)`. */
function tableSummary(request: TableRequest): string {
  const { from, to, start, end, step } = request;
  const range = `${formatNumber(start)}..${formatNumber(end)} step ${formatNumber(step)}`;
  return `${from.label} to ${to.label}, ${range} (${tableRowCount(start, end, step)} rows)`;
}

/**
 * Agent `units`: a unit converter. A single conversion is answered with a bare Message (`context.mayReply`)
 * or, on an existing task, completes it with the same text. A table is a task: WORKING, the artifact
 * `units-table` (CSV text and data), COMPLETED. Anything else gets the help, as a bare Message or as
 * TASK_STATE_INPUT_REQUIRED so that the client's next message on the task is read afresh.
 */
export class UnitsAgent implements AgentExecutor {
  async execute(context: RequestContext, events: ExecutionEventBus): Promise<void> {
    const request = parseUnitsRequest(joinedText(context.userMessage));
    switch (request.kind) {
      case 'convert': {
        const text = conversionText(request);
        return context.mayReply ? events.reply(text) : events.complete(text);
      }
      case 'table': {
        const summary = tableSummary(request);
        // Produced together, so published together: one update, one append.
        await Promise.all([
          events.working(`Converting ${summary}.`),
          events.artifact({
            artifactId: 'units-table',
            name: 'units-table',
            description: summary,
            parts: tableParts(request),
            lastChunk: true,
          }),
          events.complete(`Converted ${summary}.`),
        ]);
        return;
      }
      case 'invalid': {
        const text = helpText(request.reason);
        return context.mayReply ? events.reply(text) : events.inputRequired(text);
      }
    }
  }
}
