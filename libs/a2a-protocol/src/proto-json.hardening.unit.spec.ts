/**
 * The decoder's input hardening (docs/hardening.md): ProtoJSON edge cases of int32 (digest §3), strings that
 * cannot be stored, identifier lengths and the request nesting scan.
 */
import { describe, expect, it } from 'vitest';
import { A2aError } from './errors';
import {
  decodeGetTaskRequest,
  decodeListTaskPushNotificationConfigsRequest,
  decodeListTasksRequest,
  decodeSendMessageRequest,
  jsonNestingExceeds,
  MAX_REQUEST_JSON_NESTING,
} from './proto-json';

function fieldsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(A2aError);
    expect((e as A2aError).reason).toBe('INVALID_PARAMS');
    return (e as A2aError).fieldViolations.map((v) => v.field);
  }
  throw new Error('expected the decoder to throw');
}

const message = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  messageId: 'm1',
  role: 'ROLE_USER',
  parts: [{ text: 'hi' }],
  ...extra,
});

describe('int32 per ProtoJSON (§3)', () => {
  it.each([
    [100, 100],
    [1e2, 100],
    [-0, 0],
    ['12', 12],
    ['1e2', 100],
    ['1E+2', 100],
    ['100.0', 100],
    ['12.50e1', 125],
    ['-0', 0],
    ['0e999999999', 0],
    ['2147483647', 2_147_483_647],
    ['21474836.47e2', 2_147_483_647],
  ])('accepts %j as %d', (raw, expected) => {
    const decoded = decodeGetTaskRequest({ id: 't', historyLength: raw });
    expect(Object.is(decoded.historyLength, expected)).toBe(true);
  });

  it.each([
    [1.5],
    ['1.5'],
    ['1.0000000000000000001'],
    ['1e-1'],
    ['NaN'],
    ['Infinity'],
    ['-Infinity'],
    ['0x10'],
    ['+1'],
    ['01'],
    ['1 '],
    ['1_000'],
    ['2147483648'],
    ['1e10'],
    ['1e999999999'],
    [Number.POSITIVE_INFINITY],
    [2 ** 53 + 2],
    [[1]],
    [{}],
    [false],
  ])('refuses %j', (raw) => {
    expect(fieldsOf(() => decodeGetTaskRequest({ id: 't', historyLength: raw }))).toEqual([
      'historyLength',
    ]);
  });

  it('accepts any non-negative int32 historyLength: there is no cap below the type (§10.5)', () => {
    expect(decodeGetTaskRequest({ id: 't', historyLength: 2_147_483_647 }).historyLength).toBe(
      2_147_483_647,
    );
  });

  it('keeps ListTasks pageSize in 1–100 and ListTaskPushNotificationConfigs pageSize at ≥ 0 (§10.7)', () => {
    expect(decodeListTasksRequest({ pageSize: '100' }).pageSize).toBe(100);
    expect(fieldsOf(() => decodeListTasksRequest({ pageSize: '1e3' }))).toEqual(['pageSize']);
    expect(fieldsOf(() => decodeListTasksRequest({ pageSize: -0 }))).toEqual(['pageSize']);
    expect(
      decodeListTaskPushNotificationConfigsRequest({ taskId: 't', pageSize: 0 }),
    ).toStrictEqual({ taskId: 't' });
    expect(
      fieldsOf(() => decodeListTaskPushNotificationConfigsRequest({ taskId: 't', pageSize: -1 })),
    ).toEqual(['pageSize']);
  });
});

describe('strings that cannot be stored', () => {
  it.each([
    [
      'a lone high surrogate in a text part',
      { parts: [{ text: 'a\ud800b' }] },
      'message.parts[0].text',
    ],
    ['a lone low surrogate in messageId', { messageId: '\udc00' }, 'message.messageId'],
    ['a lone surrogate in a metadata key', { metadata: { 'k\ud800': 1 } }, 'message.metadata'],
    [
      'a lone surrogate deep in a data part',
      { parts: [{ data: [{ a: ['\udfff'] }] }] },
      'message.parts[0].data',
    ],
    ['a lone surrogate in an extension', { extensions: ['x\ud83d'] }, 'message.extensions[0]'],
  ])('refuses %s', (_title, extra, field) => {
    expect(fieldsOf(() => decodeSendMessageRequest({ message: message(extra) }))).toEqual([field]);
  });

  it('accepts paired surrogates (astral characters)', () => {
    const text = 'rocket \ud83d\ude80';
    expect(
      decodeSendMessageRequest({ message: message({ parts: [{ text }] }) }).message.parts,
    ).toEqual([{ text }]);
  });
});

describe('identifier lengths', () => {
  const long = 'i'.repeat(513);

  it.each([
    ['messageId', { messageId: long }, 'message.messageId'],
    ['contextId', { contextId: long }, 'message.contextId'],
    ['taskId', { taskId: long }, 'message.taskId'],
    ['referenceTaskIds', { referenceTaskIds: ['ok', long] }, 'message.referenceTaskIds[1]'],
  ])('refuses a %s longer than 512 characters', (_name, extra, field) => {
    expect(fieldsOf(() => decodeSendMessageRequest({ message: message(extra) }))).toEqual([field]);
  });

  it('refuses a long task id in GetTask and a long contextId filter in ListTasks', () => {
    expect(fieldsOf(() => decodeGetTaskRequest({ id: long }))).toEqual(['id']);
    expect(fieldsOf(() => decodeListTasksRequest({ contextId: long }))).toEqual(['contextId']);
  });

  it('accepts 512 characters and honours a custom limit', () => {
    expect(decodeGetTaskRequest({ id: 'i'.repeat(512) }).id).toHaveLength(512);
    expect(fieldsOf(() => decodeGetTaskRequest({ id: 'abc' }, { maxIdLength: 2 }))).toEqual(['id']);
  });
});

describe('jsonNestingExceeds', () => {
  it.each([
    ['{}', 1, false],
    ['{}', 0, true],
    ['[[1]]', 2, false],
    ['[[1]]', 1, true],
    ['{"a":{"b":[]}}', 3, false],
    ['{"a":{"b":[]}}', 2, true],
    ['["[[[[", "\\"[["]', 1, false],
    ['[] [] []', 1, false],
    ['[[[', 2, true],
  ])('%j with limit %d → %s', (text, max, expected) => {
    expect(jsonNestingExceeds(text, max)).toBe(expected);
  });

  it('finds 4 MiB of nesting too deep', () => {
    const text = '['.repeat(2 * 1024 * 1024) + ']'.repeat(2 * 1024 * 1024);
    expect(jsonNestingExceeds(text, MAX_REQUEST_JSON_NESTING)).toBe(true);
  });
});
