import { jsonRpcResult, type StreamResponse } from '@lib/a2a-protocol';
import type { Response } from 'express';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { writeSse, type SseFraming } from './sse-writer';
import type { StreamItem } from './task-event-feed';

/** The parts of an express Response that writeSse uses, recording what is written. */
class RecordingResponse extends EventEmitter {
  readonly chunks: string[] = [];
  readonly headers = new Map<string, string>();
  statusCode = 0;
  writableEnded = false;
  destroyed = false;
  writableNeedDrain = false;

  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  setHeader(name: string, value: string): void {
    this.headers.set(name, value);
  }

  flushHeaders(): void {}

  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }

  end(): void {
    this.writableEnded = true;
  }
}

const response: StreamResponse = {
  statusUpdate: {
    taskId: 't-1',
    contextId: 'c-1',
    status: {
      state: 'TASK_STATE_WORKING',
      timestamp: '2026-12-01T00:00:00.000Z',
      message: { messageId: 'm-1', role: 'ROLE_AGENT', parts: [{ text: 'step "1" \u2028 é' }] },
    },
  },
};
const item: StreamItem = { id: 7, response };

async function frameOf(data: (item: StreamItem) => unknown): Promise<string> {
  const res = new RecordingResponse();
  const framing: SseFraming = { data, error: (reason) => ({ error: reason }) };
  const stream = await writeSse(res as unknown as Response, framing, item, null);
  await stream.ended;
  expect(res.writableEnded).toBe(true);
  expect(res.chunks).toHaveLength(1);
  return res.chunks[0]!;
}

describe('writeSse framing (ADR 0008: a response is serialised once for all its subscribers)', () => {
  it('§8.4 a bare StreamResponse (HTTP+JSON): the frame is exactly `id: <generation>` and its JSON', async () => {
    expect(await frameOf((i) => i.response)).toBe(`id: 7\ndata: ${JSON.stringify(response)}\n\n`);
  });

  it('§7.3 a JSON-RPC envelope holding the response: byte for byte what JSON.stringify makes, for every kind of id', async () => {
    for (const id of ['req-1', 42, null, 'quote " and \\ backslash']) {
      const envelope = jsonRpcResult(id, response);
      expect(await frameOf((i) => jsonRpcResult(id, i.response))).toBe(
        `id: 7\ndata: ${JSON.stringify(envelope)}\n\n`,
      );
    }
  });

  it('members JSON leaves out (undefined, functions) are left out, and objects with toJSON or another prototype are serialised as JSON.stringify does', async () => {
    const withHoles = (i: StreamItem): unknown => ({
      a: undefined,
      result: i.response,
      f: () => 1,
      n: 1,
    });
    expect(await frameOf(withHoles)).toBe(`id: 7\ndata: ${JSON.stringify(withHoles(item))}\n\n`);
    const custom = (i: StreamItem): unknown => ({ result: i.response, toJSON: () => 'custom' });
    expect(await frameOf(custom)).toBe('id: 7\ndata: "custom"\n\n');
    class Envelope {
      constructor(readonly result: StreamResponse) {}
    }
    const instance = (i: StreamItem): unknown => new Envelope(i.response);
    expect(await frameOf(instance)).toBe(`id: 7\ndata: ${JSON.stringify(instance(item))}\n\n`);
  });
});
