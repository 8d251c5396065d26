import { randomUUID } from 'node:crypto';
import { request, type Agent, type RequestOptions } from 'node:http';

/** One agent's JSON-RPC URL, reached through a node:http agent of the bench's own (no connection cap). */
export interface RpcEndpoint {
  host: string;
  port: number;
  path: string;
  agent: Agent;
}

export function rpcBody(method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params });
}

/** A JSON-RPC POST of `body` to `endpoint` as an A2A 1.0 client with an API key sends it (node:http options). */
export function rpcRequest(endpoint: RpcEndpoint, body: string, apiKey: string): RequestOptions {
  return {
    host: endpoint.host,
    port: endpoint.port,
    path: endpoint.path,
    method: 'POST',
    agent: endpoint.agent,
    headers: {
      'Content-Type': 'application/json',
      'A2A-Version': '1.0',
      'X-API-Key': apiKey,
      'Content-Length': Buffer.byteLength(body),
    },
  };
}

/** One plain JSON-RPC call; resolves to the parsed answer. */
export function postRpc<T = unknown>(
  endpoint: RpcEndpoint,
  body: string,
  apiKey: string,
  timeoutMs: number,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = request({ ...rpcRequest(endpoint, body, apiKey), timeout: timeoutMs }, (res) => {
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        try {
          resolve(JSON.parse(text) as T);
        } catch {
          reject(new Error(`HTTP ${String(res.statusCode)}: ${text.slice(0, 200)}`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}
