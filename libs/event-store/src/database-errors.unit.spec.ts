import { describe, expect, it } from 'vitest';
import { isTransientDatabaseError } from './database-errors';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('isTransientDatabaseError', () => {
  it.each([
    [
      'a server shutting down (57P01)',
      withCode('terminating connection due to administrator command', '57P01'),
    ],
    [
      'a crashed server (57P02)',
      withCode('terminating connection because of crash of another server process', '57P02'),
    ],
    ['a server starting up (57P03)', withCode('the database system is starting up', '57P03')],
    ['a connection exception (08006)', withCode('connection failure', '08006')],
    ['too many connections (53300)', withCode('sorry, too many clients already', '53300')],
    ['a serialization failure (40001)', withCode('could not serialize access', '40001')],
    ['a deadlock (40P01)', withCode('deadlock detected', '40P01')],
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset connection', withCode('read ECONNRESET', 'ECONNRESET')],
    ['a connection the server dropped', new Error('Connection terminated unexpectedly')],
    [
      'a broken client reused',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['a connect timeout', new Error('timeout exceeded when trying to connect')],
    [
      'refused on every address',
      new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], ''),
    ],
  ])('%s is transient', (_name, error) => {
    expect(isTransientDatabaseError(error)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', withCode('duplicate key value', '23505')],
    ['a syntax error (42601)', withCode('syntax error at or near', '42601')],
    ['an undefined table (42P01)', withCode('relation does not exist', '42P01')],
    ['an ordinary bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a thrown string', 'Connection terminated'],
    ['nothing', undefined],
  ])('%s is not', (_name, error) => {
    expect(isTransientDatabaseError(error)).toBe(false);
  });
});
