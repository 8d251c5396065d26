import type { IncomingMessage } from 'node:http';
import { wallMs } from './wall-clock';

/**
 * Reads an SSE response block by block (the text between blank lines), each with the wall-clock time its
 * chunk arrived, then reports how it ended: null for a stream that ended normally, else what went wrong (a
 * plain answer instead of a stream, such as a JSON-RPC error or a task that had already ended; a non-200
 * status; a broken response).
 */
export function readSseBlocks(
  res: IncomingMessage,
  onBlock: (block: string, at: number) => void,
  finish: (problem: string | null) => void,
): void {
  res.setEncoding('utf8');
  let buffer = '';
  res.on('error', (error) => finish(`response: ${error.message}`));
  if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    res.on('data', (chunk: string) => (buffer += chunk));
    res.on('end', () =>
      finish(`no stream: HTTP ${String(res.statusCode)} ${buffer.slice(0, 160)}`),
    );
    return;
  }
  res.on('data', (chunk: string) => {
    const at = wallMs();
    buffer += chunk;
    let cut = buffer.indexOf('\n\n');
    while (cut >= 0) {
      onBlock(buffer.slice(0, cut), at);
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf('\n\n');
    }
  });
  res.on('end', () =>
    finish(
      res.statusCode === 200 ? null : `HTTP ${String(res.statusCode)}: ${buffer.slice(0, 160)}`,
    ),
  );
}
