import type { Artifact, Message, Task } from '@lib/a2a-protocol';
import { AGENT_PROFILES, type RequestContext } from '@lib/worker-sdk';
import { describe, expect, it } from 'vitest';
import { recordingBus } from '../test/recording-bus';
import {
  conversionText,
  convert,
  findUnit,
  formatNumber,
  MAX_TABLE_ROWS,
  parseUnitsRequest,
  tableCsv,
  tableRowCount,
  tableRows,
  UNITS,
  UNITS_HELP,
  UnitsAgent,
  type ConvertRequest,
  type TableRequest,
  type Unit,
} from './units.agent';

const user = (text: string): Message => ({
  messageId: `u-${text}`,
  role: 'ROLE_USER',
  parts: [{ text }],
});

function contextOf(
  userMessage: Message,
  { mayReply, history = [userMessage] }: { mayReply: boolean; history?: Message[] },
): RequestContext {
  const task: Task = {
    id: 't',
    contextId: 'c',
    status: { state: 'TASK_STATE_SUBMITTED' },
    history,
  };
  return {
    taskId: 't',
    contextId: 'c',
    userMessage,
    task,
    attempt: 1,
    mayReply,
    signal: new AbortController().signal,
  };
}

/** Runs the agent: what it published as lines (an artifact without its parts), and the artifacts whole. */
async function run(
  text: string,
  options: { mayReply: boolean; history?: Message[] },
): Promise<{ lines: string[]; artifacts: Artifact[] }> {
  const { bus, lines, updates } = recordingBus(() => '');
  await new UnitsAgent().execute(contextOf(user(text), options), bus);
  return {
    lines,
    artifacts: updates.flatMap((update) => (update.kind === 'artifact' ? [update.artifact] : [])),
  };
}

const unitOf = (name: string): Unit => {
  const found = findUnit(name);
  if (!found) {
    throw new Error(`no unit ${name}`);
  }
  return found;
};

/** A parsed request of the expected kind, or a failed expectation. */
function parsedAs<K extends 'convert' | 'table'>(
  text: string,
  kind: K,
): K extends 'convert' ? ConvertRequest : TableRequest {
  const request = parseUnitsRequest(text);
  expect(request.kind, `${text}: ${request.kind === 'invalid' ? request.reason : ''}`).toBe(kind);
  return request as K extends 'convert' ? ConvertRequest : TableRequest;
}

describe('units: the unit table', () => {
  it('knows lengths, masses and temperatures by symbol', () => {
    expect(UNITS.map((u) => `${u.dimension}:${u.symbol}`)).toEqual([
      'length:km',
      'length:m',
      'length:cm',
      'length:mi',
      'length:ft',
      'length:in',
      'mass:kg',
      'mass:g',
      'mass:lb',
      'mass:oz',
      'temperature:c',
      'temperature:f',
      'temperature:k',
    ]);
  });

  it.each([
    ['km', 'km'],
    ['KM', 'km'],
    ['miles', 'mi'],
    ['Feet', 'ft'],
    ['inch', 'in'],
    ['lbs', 'lb'],
    ['°C', 'c'],
    ['Fahrenheit', 'f'],
    ['kelvin', 'k'],
  ])('reads %j as %s', (name, symbol) => {
    expect(findUnit(name)?.symbol).toBe(symbol);
  });

  it('has no unit named like a connector or a made-up unit', () => {
    expect(findUnit('to')).toBeUndefined();
    expect(findUnit('parsec')).toBeUndefined();
  });

  it('gives every name to one unit only', () => {
    const names = UNITS.flatMap((u) => [u.symbol, ...u.aliases]);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('units: convert', () => {
  it.each([
    [10, 'km', 'mi', 6.213_711_922_373_34],
    [1, 'mi', 'ft', 5_280],
    [1, 'ft', 'in', 12],
    [1, 'in', 'cm', 2.54],
    [1, 'lb', 'g', 453.592_37],
    [1, 'lb', 'oz', 16],
    [2.5, 'kg', 'g', 2_500],
    [100, 'c', 'f', 212],
    [-40, 'c', 'f', -40],
    [-40, 'f', 'c', -40],
    [32, 'f', 'c', 0],
    [0, 'k', 'c', -273.15],
    [0, 'c', 'k', 273.15],
    [212, 'f', 'k', 373.15],
  ])('%d %s is %d %s', (value, from, to, expected) => {
    expect(convert(value, unitOf(from), unitOf(to))).toBeCloseTo(expected, 9);
  });

  it('is the identity between a unit and itself', () => {
    expect(convert(37.5, unitOf('c'), unitOf('c'))).toBe(37.5);
    expect(convert(3, unitOf('oz'), unitOf('oz'))).toBe(3);
  });
});

describe('units: formatNumber', () => {
  it.each([
    [6.213_711_922_373_34, '6.2137'],
    [211.999_999_999_999_97, '212'],
    [22.046_226_218_487_757, '22.0462'],
    [2.5, '2.5'],
    [1_000_000, '1000000'],
    [-273.15, '-273.15'],
    [0, '0'],
    [-0, '0'],
    [0.621_371_192, '0.6214'],
    [0.000_025_4, '0.0000254'],
    [0.000_006_213_711_922, '0.000006214'],
    [2.842_170_943_040_401e-14, '0'],
    [-2.842_170_943_040_401e-14, '0'],
  ])('writes %d as %s', (value, text) => {
    expect(formatNumber(value)).toBe(text);
  });
});

describe('units: parseUnitsRequest, single values', () => {
  it.each([
    ['convert 10 km to mi', 10, 'km', 'mi'],
    ['10 kg in lb', 10, 'kg', 'lb'],
    ['100 c to f', 100, 'c', 'f'],
    ['  Convert   2.5 MI into Km? ', 2.5, 'mi', 'km'],
    ['10in to cm', 10, 'in', 'cm'],
    ['5 ft in in', 5, 'ft', 'in'],
    ['-40 °C as °F', -40, 'c', 'f'],
    ['.5 lb -> oz', 0.5, 'lb', 'oz'],
    ['3 pounds to grams.', 3, 'lb', 'g'],
  ])('%j converts %d %s to %s', (text, value, from, to) => {
    const request = parsedAs(text, 'convert');
    expect([request.value, request.from.symbol, request.to.symbol]).toEqual([value, from, to]);
  });
});

describe('units: parseUnitsRequest, tables', () => {
  it.each([
    ['table km to mi 1..100', 'km', 'mi', 1, 100, 1],
    ['table 1-20 kg to lb', 'kg', 'lb', 1, 20, 1],
    ['table c to f -40..100 step 10', 'c', 'f', -40, 100, 10],
    ['Table 0 - 1 KG in g step 0.25', 'kg', 'g', 0, 1, 0.25],
    ['table 10..0 mi to km step 2.5', 'mi', 'km', 10, 0, 2.5],
    ['table -10--1 c to k', 'c', 'k', -10, -1, 1],
    ['table 1..1000 km to mi', 'km', 'mi', 1, 1000, 1],
  ])('%j tabulates %s to %s from %d to %d by %d', (text, from, to, start, end, step) => {
    const request = parsedAs(text, 'table');
    expect([
      request.from.symbol,
      request.to.symbol,
      request.start,
      request.end,
      request.step,
    ]).toEqual([from, to, start, end, step]);
  });

  it.each([
    [1, 100, 1, 100],
    [1, 20, 1, 20],
    [0, 1, 0.1, 11],
    [0, 1, 0.3, 4],
    [10, 0, 2.5, 5],
    [5, 5, 1, 1],
  ])('from %d to %d by %d has %i rows', (start, end, step, rows) => {
    expect(tableRowCount(start, end, step)).toBe(rows);
  });
});

describe('units: parseUnitsRequest, what it does not understand', () => {
  it.each([
    ['', 'Send the conversion as text.'],
    ['   ', 'Send the conversion as text.'],
    ['hello', 'I could not read that.'],
    ['10 km', 'I could not read that.'],
    ['convert km to mi', 'I could not read that.'],
    ['table km to mi', 'I could not read that table.'],
    ['table km to mi 1..10 step', 'I could not read that table.'],
    ['convert 10 km to kg', 'km is a length and kg a mass: they do not convert.'],
    ['table 1..5 lb to c', 'lb is a mass and °C a temperature: they do not convert.'],
    ['10 parsecs to km', "Unknown unit 'parsecs'."],
    ['10 furlongs to fathoms', "Unknown unit 'furlongs' and 'fathoms'."],
    ['-300 c to f', '-300 °C is below absolute zero.'],
    ['-1 k to c', '-1 K is below absolute zero.'],
    ['table k to c -5..10', '-5 K is below absolute zero.'],
    ['table km to mi 1..10 step 0', 'The step must be greater than 0.'],
    ['table km to mi 1..10 step -1', 'The step must be greater than 0.'],
    ['table km to mi 0..1000', 'That table would have 1001 rows; the limit is 1000.'],
    ['table 0..1 m to cm step 0.0001', 'That table would have 10001 rows; the limit is 1000.'],
    [`${'9'.repeat(400)} km to mi`, 'That number is too large.'],
  ])('%j: %s', (text, reason) => {
    expect(parseUnitsRequest(text)).toEqual({ kind: 'invalid', reason });
  });

  it('accepts absolute zero itself', () => {
    expect(conversionText(parsedAs('-459.67 f to c', 'convert'))).toBe('-459.67 °F = -273.15 °C');
    expect(conversionText(parsedAs('-273.15 c to k', 'convert'))).toBe('-273.15 °C = 0 K');
  });
});

describe('units: answers', () => {
  it.each([
    ['convert 10 km to mi', '10 km = 6.2137 mi'],
    ['10 kg in lb', '10 kg = 22.0462 lb'],
    ['100 c to f', '100 °C = 212 °F'],
    ['-40 c to f', '-40 °C = -40 °F'],
    ['32 f to c', '32 °F = 0 °C'],
    ['0 k to c', '0 K = -273.15 °C'],
    ['1 in to cm', '1 in = 2.54 cm'],
    ['1 oz to g', '1 oz = 28.3495 g'],
    ['1 cm to mi', '1 cm = 0.000006214 mi'],
    ['1.50 mi to m', '1.5 mi = 2414.016 m'],
  ])('%j → %s', (text, answer) => {
    expect(conversionText(parsedAs(text, 'convert'))).toBe(answer);
  });

  it('tabulates rounded values, counting up', () => {
    const request = parsedAs('table km to mi 1..3', 'table');
    expect(tableRows(request)).toEqual([
      [1, 0.6214],
      [2, 1.2427],
      [3, 1.8641],
    ]);
    expect(tableCsv(request)).toBe('km,mi\n1,0.6214\n2,1.2427\n3,1.8641\n');
  });

  it('tabulates temperatures (affine) counting down, by a fractional step without drift', () => {
    expect(tableRows(parsedAs('table c to f 100..0 step 50', 'table'))).toEqual([
      [100, 212],
      [50, 122],
      [0, 32],
    ]);
    const fine = tableRows(parsedAs('table 0..1 kg to g step 0.1', 'table'));
    expect(fine.map(([kg]) => kg)).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);
    expect(fine.map(([, g]) => g)).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
  });
});

describe('units agent', () => {
  const HELP_UNREADABLE = `I could not read that. ${UNITS_HELP}`;

  it('answers a single conversion with a bare message when it may reply', async () => {
    const { lines, artifacts } = await run('convert 10 km to mi', { mayReply: true });
    expect(lines).toEqual(['reply 10 km = 6.2137 mi']);
    expect(artifacts).toEqual([]);
  });

  it('completes the task with the same text when it may not reply (a message on an existing task)', async () => {
    const { lines } = await run('100 c to f', { mayReply: false });
    expect(lines).toEqual(['COMPLETED 100 °C = 212 °F']);
  });

  it('starts a task for a table: WORKING, the artifact units-table, COMPLETED', async () => {
    const { lines, artifacts } = await run('table km to mi 1..3', { mayReply: true });
    expect(lines).toEqual([
      'WORKING Converting km to mi, 1..3 step 1 (3 rows).',
      'artifact units-table!',
      'COMPLETED Converted km to mi, 1..3 step 1 (3 rows).',
    ]);
    expect(artifacts).toEqual([
      {
        artifactId: 'units-table',
        name: 'units-table',
        description: 'km to mi, 1..3 step 1 (3 rows)',
        parts: [
          { text: 'km,mi\n1,0.6214\n2,1.2427\n3,1.8641\n', mediaType: 'text/csv' },
          {
            data: {
              from: 'km',
              to: 'mi',
              rows: [
                [1, 0.6214],
                [2, 1.2427],
                [3, 1.8641],
              ],
            },
            mediaType: 'application/json',
          },
        ],
      },
    ]);
  });

  it('publishes a table of the largest size in one artifact', async () => {
    const { lines, artifacts } = await run(`table 1..${MAX_TABLE_ROWS} lb to kg`, {
      mayReply: false,
    });
    expect(lines).toEqual([
      'WORKING Converting lb to kg, 1..1000 step 1 (1000 rows).',
      'artifact units-table!',
      'COMPLETED Converted lb to kg, 1..1000 step 1 (1000 rows).',
    ]);
    const [csv, data] = artifacts[0]?.parts ?? [];
    const csvLines = csv?.text?.trimEnd().split('\n') ?? [];
    expect(csvLines).toHaveLength(MAX_TABLE_ROWS + 1);
    expect(csvLines.slice(0, 3)).toEqual(['lb,kg', '1,0.4536', '2,0.9072']);
    expect(csvLines.at(-1)).toBe('1000,453.5924');
    expect((data?.data as { rows: unknown[] }).rows).toHaveLength(MAX_TABLE_ROWS);
  });

  it('replies with the help when it may reply and cannot read the message', async () => {
    expect((await run('what is a furlong', { mayReply: true })).lines).toEqual([
      `reply ${HELP_UNREADABLE}`,
    ]);
    expect((await run('convert 10 km to kg', { mayReply: true })).lines).toEqual([
      `reply km is a length and kg a mass: they do not convert. ${UNITS_HELP}`,
    ]);
  });

  it('asks for input with the help on an existing task, and reads the next message afresh', async () => {
    const first = user('what is a furlong');
    expect((await run('what is a furlong', { mayReply: false })).lines).toEqual([
      `INPUT_REQUIRED ${HELP_UNREADABLE}`,
    ]);
    const help: Message = {
      messageId: 'a-1',
      role: 'ROLE_AGENT',
      parts: [{ text: HELP_UNREADABLE }],
    };
    const answer = user('3 ft to m');
    const { lines } = await run('3 ft to m', { mayReply: false, history: [first, help, answer] });
    expect(lines).toEqual(['COMPLETED 3 ft = 0.9144 m']);
  });

  it('the help names every unit and both forms, with the row limit', () => {
    expect(UNITS_HELP).toBe(
      'I convert lengths (km, m, cm, mi, ft, in), masses (kg, g, lb, oz) and temperatures (c, f, k). ' +
        "One value: 'convert 10 km to mi' or '100 c in f'. A table: 'table km to mi 1..100' or " +
        "'table 1-20 kg to lb', optionally with 'step 5' (at most 1000 rows).",
    );
  });
});

describe('units agent: profile', () => {
  const profile = AGENT_PROFILES.units;

  it('declares message replies, its output modes and its two skills', () => {
    expect(profile.messageReplies).toBe(true);
    expect(profile.version).toBe('1.0.0');
    expect(profile.defaultInputModes).toEqual(['text/plain']);
    expect(profile.defaultOutputModes).toEqual(['text/plain', 'text/csv', 'application/json']);
    expect(profile.skills.map((s) => s.id)).toEqual(['convert', 'table']);
  });

  it('every skill example is understood as that skill', () => {
    const [convertSkill, tableSkill] = profile.skills;
    expect(convertSkill?.examples.map((e) => parseUnitsRequest(e).kind)).toEqual([
      'convert',
      'convert',
      'convert',
    ]);
    expect(tableSkill?.examples.map((e) => parseUnitsRequest(e).kind)).toEqual([
      'table',
      'table',
      'table',
    ]);
  });
});
