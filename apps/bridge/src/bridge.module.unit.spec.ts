import { describe, expect, it } from 'vitest';
import { workerTarget } from './bridge.module';

describe('workerTarget', () => {
  it('dials a list of IPv4 addresses as one target, and leaves any other target alone', () => {
    expect(workerTarget('127.0.0.1:1001, 127.0.0.1:1002')).toBe(
      'ipv4:127.0.0.1:1001,127.0.0.1:1002',
    );
    expect(workerTarget('dns:///a2a-task-service:50052')).toBe('dns:///a2a-task-service:50052');
    expect(workerTarget('127.0.0.1:50052')).toBe('127.0.0.1:50052');
  });
});
