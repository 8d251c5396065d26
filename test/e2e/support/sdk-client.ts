import {
  SendMessageRequest,
  TaskState,
  type AgentCard,
  type Part,
  type SendMessageResult,
  type Task,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type BeforeArgs,
  type CallInterceptor,
  type Client,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';

/** One HTTP exchange the SDK made, as seen on the wire (for assertions the SDK's types cannot express). */
export interface Exchange {
  url: string;
  method: string;
  requestHeaders: Record<string, string>;
  requestBody: unknown;
  status: number;
  responseBody: unknown;
}

/**
 * The name of the header that carries the API key, read from the card the SDK resolved: the scheme named
 * by the card's security requirements must be an `apiKeySecurityScheme` located in a header. A card that
 * does not declare it makes every SDK call fail, so the card's declaration is itself under test.
 */
export function apiKeyHeaderOf(card: AgentCard): string {
  for (const requirement of card.securityRequirements) {
    for (const schemeName of Object.keys(requirement.schemes)) {
      const scheme = card.securitySchemes[schemeName]?.scheme;
      if (scheme?.$case === 'apiKeySecurityScheme' && scheme.value.location === 'header') {
        return scheme.value.name;
      }
    }
  }
  throw new Error(`agent card ${card.name} declares no header API-key security requirement`);
}

/**
 * Adds the API key through the SDK's supported extension point: a `CallInterceptor` that sets the header
 * the card declares as a service parameter (the JSON-RPC transport sends service parameters as HTTP headers).
 */
export class ApiKeyInterceptor implements CallInterceptor {
  constructor(private readonly apiKey: string) {}

  before(args: BeforeArgs): Promise<void> {
    const header = apiKeyHeaderOf(args.agentCard);
    args.options = {
      ...args.options,
      serviceParameters: { ...args.options?.serviceParameters, [header]: this.apiKey },
    };
    return Promise.resolve();
  }

  after(): Promise<void> {
    return Promise.resolve();
  }
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  new Headers(headers).forEach((value, key) => {
    record[key] = value;
  });
  return record;
}

/**
 * A `fetch` that records every exchange (request headers and body, response status and JSON body). An event
 * stream is handed on untouched, with no response body recorded: reading it first would hold every event
 * back until the server closes the stream.
 */
export function recordingFetch(exchanges: Exchange[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    let responseBody: unknown;
    if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
      const text = await response.clone().text();
      try {
        responseBody = JSON.parse(text);
      } catch {
        responseBody = text;
      }
    }
    const url = input instanceof Request ? input.url : String(input);
    exchanges.push({
      url,
      method: init?.method ?? 'GET',
      requestHeaders: headerRecord(init?.headers),
      requestBody: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
      status: response.status,
      responseBody,
    });
    return response;
  };
}

export interface SdkAgent {
  client: Client;
  card: AgentCard;
  /** Every exchange of this client, card download included. */
  exchanges: Exchange[];
  /** The JSON-RPC response body of the latest call. */
  lastResponse(): { jsonrpc: string; id: unknown; result?: unknown; error?: unknown };
}

async function agentFrom(
  options: Partial<ClientFactoryOptions>,
  exchanges: Exchange[],
  fetchImpl: typeof fetch,
  baseUrl: string,
  cardPath: string,
  apiKey: string,
): Promise<SdkAgent> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      ...options,
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      clientConfig: { interceptors: [new ApiKeyInterceptor(apiKey)] },
    }),
  );
  const client = await factory.createFromUrl(baseUrl, cardPath);
  const card = await client.getAgentCard();
  return {
    client,
    card,
    exchanges,
    lastResponse() {
      const last = exchanges[exchanges.length - 1];
      if (!last) {
        throw new Error('no exchange recorded yet');
      }
      return last.responseBody as { jsonrpc: string; id: unknown; result?: unknown };
    },
  };
}

/**
 * The official A2A client, created the way an outside caller would: from the agent card URL, with only the
 * JSON-RPC transport and the API key added by an interceptor.
 */
export async function sdkClientFromCard(
  baseUrl: string,
  cardPath: string,
  apiKey: string,
): Promise<SdkAgent> {
  const exchanges: Exchange[] = [];
  const fetchImpl = recordingFetch(exchanges);
  return agentFrom(
    { transports: [new JsonRpcTransportFactory({ fetchImpl })] },
    exchanges,
    fetchImpl,
    baseUrl,
    cardPath,
    apiKey,
  );
}

/** The protocol bindings the SDK ships a transport for, by their card name (spec digest §4.5). */
export const SDK_TRANSPORTS = ['JSONRPC', 'HTTP+JSON', 'GRPC'] as const;
export type SdkTransport = (typeof SDK_TRANSPORTS)[number];

/**
 * The official A2A client as a user who prefers one binding builds it: from the agent card URL, with every
 * transport the SDK ships (JSON-RPC, HTTP+JSON, gRPC), `preferredTransports` naming the one to use, and the
 * API key added by an interceptor. Both HTTP transports and the card resolver share a recording `fetch`, so
 * `exchanges` shows which HTTP calls the client made (a gRPC client makes none after the card).
 */
export async function sdkClientOver(
  transport: SdkTransport,
  baseUrl: string,
  cardPath: string,
  apiKey: string,
): Promise<SdkAgent> {
  const exchanges: Exchange[] = [];
  const fetchImpl = recordingFetch(exchanges);
  return agentFrom(
    {
      transports: [
        new JsonRpcTransportFactory({ fetchImpl }),
        new RestTransportFactory({ fetchImpl }),
        new GrpcTransportFactory(),
      ],
      preferredTransports: [transport],
    },
    exchanges,
    fetchImpl,
    baseUrl,
    cardPath,
    apiKey,
  );
}

/** A SendMessageRequest in the SDK's model, built from its ProtoJSON form. */
export function sendRequest(
  message: Record<string, unknown>,
  configuration?: Record<string, unknown>,
): SendMessageRequest {
  return SendMessageRequest.fromJSON({ message, ...(configuration ? { configuration } : {}) });
}

/** The Task of a SendMessage result (the platform always answers with a task). */
export function asTask(result: SendMessageResult): Task {
  if ('messageId' in result) {
    throw new Error(`expected a Task, got a Message ${result.messageId}`);
  }
  return result;
}

export function textOf(parts: readonly Part[] | undefined): string {
  return (parts ?? [])
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('');
}

export function stateOf(task: Task): TaskState {
  return task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
}

export function stateName(task: Task): string {
  return TaskState[stateOf(task)] ?? String(stateOf(task));
}

const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

export function isTerminal(task: Task): boolean {
  return TERMINAL.has(stateOf(task));
}
