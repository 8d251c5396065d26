import { A2aError } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import {
  parseJsonBody,
  parseQuery,
  queryFields,
  queryTenants,
  withPathFields,
} from './rest-request';

function reasonOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof A2aError) {
      return error.reason;
    }
    throw error;
  }
  throw new Error('expected an A2aError');
}

describe('query parameters (spec digest §8.2)', () => {
  const kinds = {
    pageSize: 'int32',
    status: 'enum',
    includeArtifacts: 'bool',
    contextId: 'string',
  } as const;

  it('converts each kind to its ProtoJSON value and ignores unknown names', () => {
    const query = parseQuery(
      'pageSize=10&status=TASK_STATE_WORKING&includeArtifacts=true&contextId=a+b%2Bc&x=1',
    );
    // int32 values stay strings: the shared decoder applies ProtoJSON's int32 rules to them (`1e2` is 100).
    expect(queryFields(query, kinds)).toStrictEqual({
      pageSize: '10',
      status: 'TASK_STATE_WORKING',
      includeArtifacts: true,
      contextId: 'a b+c',
    });
    expect(queryFields(parseQuery('status=3&includeArtifacts=false'), kinds)).toStrictEqual({
      status: 3,
      includeArtifacts: false,
    });
  });

  it.each([
    ['pageSize=', 'pageSize'],
    ['pageSize=%ZZ', 'pageSize'],
    ['includeArtifacts=TRUE', 'includeArtifacts'],
    ['contextId=a&contextId=b', 'contextId'],
    ['tenant=a&tenant=a', 'tenant'],
  ])('%s is INVALID_PARAMS on %s', (text, field) => {
    try {
      queryFields(parseQuery(text), kinds);
      throw new Error('expected an error');
    } catch (error) {
      expect(error).toBeInstanceOf(A2aError);
      expect((error as A2aError).reason).toBe('INVALID_PARAMS');
      expect((error as A2aError).fieldViolations.map((v) => v.field)).toStrictEqual([field]);
    }
  });

  it('tenant values are collected; a bad escape in one is INVALID_PARAMS', () => {
    expect(queryTenants(parseQuery('tenant=demo%2Fecho&tenant='))).toStrictEqual(['demo/echo']);
    expect(reasonOf(() => queryTenants(parseQuery('tenant=%ZZ')))).toBe('INVALID_PARAMS');
  });
});

describe('request bodies (spec digest §8.1, §8.2)', () => {
  it('an empty body is {} whatever its type; a JSON object is accepted as a2a+json or json', () => {
    expect(parseJsonBody('', undefined)).toStrictEqual({});
    expect(parseJsonBody('  ', 'text/plain')).toStrictEqual({});
    expect(parseJsonBody('{"a":1}', 'application/A2A+JSON; charset=utf-8')).toStrictEqual({ a: 1 });
    expect(parseJsonBody('{"a":1}', 'application/json')).toStrictEqual({ a: 1 });
  });

  it('another type, bad JSON and a non-object are refused', () => {
    expect(reasonOf(() => parseJsonBody('{}', 'text/plain'))).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(reasonOf(() => parseJsonBody('{}', undefined))).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(
      reasonOf(() => parseJsonBody(`${'['.repeat(100)}${']'.repeat(100)}`, 'application/json')),
    ).toBe('INVALID_PARAMS');
    expect(reasonOf(() => parseJsonBody('{', 'application/json'))).toBe('PARSE_ERROR');
    expect(reasonOf(() => parseJsonBody('[1]', 'application/json'))).toBe('INVALID_REQUEST');
  });

  it('path fields fill the body; a different body value is INVALID_PARAMS, the same or an empty one is not', () => {
    expect(withPathFields({ url: 'u', task_id: 't1' }, { taskId: 't1' })).toStrictEqual({
      url: 'u',
      taskId: 't1',
    });
    expect(withPathFields({ id: '' }, { id: 't1' })).toStrictEqual({ id: 't1' });
    expect(reasonOf(() => withPathFields({ taskId: 't2' }, { taskId: 't1' }))).toBe(
      'INVALID_PARAMS',
    );
    expect(reasonOf(() => withPathFields({ id: 7 }, { id: 't1' }))).toBe('INVALID_PARAMS');
  });
});
