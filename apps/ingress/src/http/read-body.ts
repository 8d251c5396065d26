import { A2aError } from '@lib/a2a-protocol';
import type { IncomingMessage } from 'node:http';

/** Reads the raw request body as UTF-8, refusing more than `maxBytes` (PAYLOAD_TOO_LARGE). */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > maxBytes) {
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function tooLarge(maxBytes: number): A2aError {
  return new A2aError('PAYLOAD_TOO_LARGE', `request body exceeds ${maxBytes} bytes`, {
    maxBytes: String(maxBytes),
  });
}
