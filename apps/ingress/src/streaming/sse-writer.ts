import type { Response } from 'express';
import type { StreamItem, TaskSubscription } from './task-event-feed';

const KEEP_ALIVE_MS = 15_000;

/** How one binding frames a stream item, and the error it sends when a stream ends abnormally. */
export interface SseFraming {
  data(item: StreamItem): unknown;
  error(reason: 'overflow' | 'error'): unknown;
}

/**
 * Writes a task's events as Server-Sent Events (spec digest §7.3, §8.4): each event carries `id: <generation>`
 * so a client can resume with Last-Event-ID. Backpressure: while the socket is full the subscription keeps
 * buffering up to its bound, after which the client is cut off rather than growing memory.
 */
export async function writeSse(
  res: Response,
  framing: SseFraming,
  first: StreamItem | null,
  subscription: TaskSubscription | null,
  headers: Record<string, string> = {},
): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  for (const [name, value] of Object.entries(headers)) {
    res.setHeader(name, value);
  }
  res.flushHeaders();
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  // The request's own 'close' fired when its body was read; the response's fires when the client goes.
  const gone = (): void => subscription?.close('closed');
  res.on('close', gone);
  try {
    if (first) {
      await write(res, frame(first, framing), subscription);
    }
    while (subscription && !res.writableEnded && !res.destroyed) {
      const items = await subscription.take();
      if (items.length === 0) {
        const ended = subscription.ended;
        if (ended === 'overflow' || ended === 'error') {
          res.write(`event: error\ndata: ${JSON.stringify(framing.error(ended))}\n\n`);
        }
        break;
      }
      for (const item of items) {
        await write(res, frame(item, framing), subscription);
      }
    }
  } finally {
    clearInterval(keepAlive);
    res.off('close', gone);
    subscription?.close('closed');
    if (!res.writableEnded) {
      res.end();
    }
  }
}

function frame(item: StreamItem, framing: SseFraming): string {
  return `id: ${item.id}\ndata: ${JSON.stringify(framing.data(item))}\n\n`;
}

/** Writes one frame; when the socket is full, waits for it to drain or for the subscription to end. */
async function write(
  res: Response,
  chunk: string,
  subscription: TaskSubscription | null,
): Promise<void> {
  if (res.destroyed || res.write(chunk)) {
    return;
  }
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearInterval(check);
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    const check = setInterval(() => {
      if (subscription?.ended === 'overflow') {
        res.destroy();
        done();
      }
    }, 100);
    res.on('drain', done);
    res.on('close', done);
  });
}
