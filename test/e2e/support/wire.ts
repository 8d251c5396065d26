/**
 * What the helpers of the three bindings share (json-rpc.ts, rest.ts, grpc.ts): the service parameters with
 * the suites' defaults (spec digest §10.1, §10.2) and the google.rpc error details every binding carries
 * (§9.3), read from ProtoJSON here and from binary in grpc.ts, and checked by one assertion.
 */
import { expect } from 'vitest';

export const DEMO_API_KEY = 'demo-key';
export const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
export const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';
/** ErrorInfo domain of the A2A-specific errors (spec digest §9.1). */
export const A2A_DOMAIN = 'a2a-protocol.org';
/** ErrorInfo domain of the platform's generic errors (parse, envelope, params, auth). */
export const PLATFORM_DOMAIN = 'a2a-platform.dev';

/**
 * How a request finds its agent (spec digest §10.9): the agent's own URL, or an entry point shared by all
 * agents that routes by the `tenant` value (`<tenant>/<agent>`, the card's AgentInterface.tenant). gRPC has
 * only the second.
 */
export type Routing = 'agent-url' | 'tenant';

/** The unary RPCs of `lf.a2a.v1.A2AService` (spec digest §2), by their JSON-RPC / gRPC name. */
export type UnaryRpc =
  | 'SendMessage'
  | 'GetTask'
  | 'ListTasks'
  | 'CancelTask'
  | 'CreateTaskPushNotificationConfig'
  | 'GetTaskPushNotificationConfig'
  | 'ListTaskPushNotificationConfigs'
  | 'DeleteTaskPushNotificationConfig'
  | 'GetExtendedAgentCard';
/** The server-streaming RPCs of `lf.a2a.v1.A2AService`. */
export type StreamingRpc = 'SendStreamingMessage' | 'SubscribeToTask';

/** The service parameters of a call (spec digest §10.1, §10.2), sent as HTTP headers or gRPC metadata. */
export interface ServiceParams {
  /** `X-API-Key`; `null` sends none. Default: the demo key. */
  apiKey?: string | null;
  /** `A2A-Version`; `null` sends none. Default: `1.0`. */
  version?: string | null;
  /** `A2A-Extensions`, comma-separated; none when empty. */
  extensions?: readonly string[];
  /** More headers (metadata entries), applied last. */
  headers?: Record<string, string>;
}

/** The service parameters by their HTTP header names; gRPC metadata takes the same names lower-cased. */
export function serviceHeaders(params: ServiceParams = {}): Record<string, string> {
  const headers: Record<string, string> = {};
  const apiKey = params.apiKey === undefined ? DEMO_API_KEY : params.apiKey;
  const version = params.version === undefined ? '1.0' : params.version;
  if (apiKey !== null) {
    headers['X-API-Key'] = apiKey;
  }
  if (version !== null) {
    headers['A2A-Version'] = version;
  }
  if (params.extensions !== undefined && params.extensions.length > 0) {
    headers['A2A-Extensions'] = params.extensions.join(',');
  }
  return { ...headers, ...params.headers };
}

/** The entries of a comma-separated header such as `A2A-Extensions`. */
export function splitList(value: string | null | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** The details of a `google.rpc.Status` (spec digest §9.3), in whatever encoding the binding used. */
export interface ErrorDetails {
  /** The type URL of every detail, in order. */
  types: string[];
  infos: { reason: string; domain: string; metadata: Record<string, string> }[];
  violations: { field: string; description: string }[];
}

interface JsonDetail {
  '@type'?: unknown;
  reason?: unknown;
  domain?: unknown;
  metadata?: unknown;
  fieldViolations?: unknown;
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** ErrorDetails out of a list of ProtoJSON `Any` (JSON-RPC `error.data`, HTTP+JSON `error.details`). */
export function detailsFromProtoJson(list: unknown): ErrorDetails {
  const details = Array.isArray(list) ? (list as JsonDetail[]) : [];
  return {
    types: details.map((d) => str(d['@type'])),
    infos: details
      .filter((d) => d['@type'] === ERROR_INFO)
      .map((d) => ({
        reason: str(d.reason),
        domain: str(d.domain),
        metadata:
          typeof d.metadata === 'object' && d.metadata !== null
            ? (d.metadata as Record<string, string>)
            : {},
      })),
    violations: details
      .filter((d) => d['@type'] === BAD_REQUEST)
      .flatMap((d) => (Array.isArray(d.fieldViolations) ? (d.fieldViolations as unknown[]) : []))
      .map((v) => {
        const violation = v as { field?: unknown; description?: unknown };
        return { field: str(violation.field), description: str(violation.description) };
      }),
  };
}

/** What every error of every binding must carry (spec digest §9.3): one ErrorInfo, first; described violations. */
export function expectWellFormedDetails(details: ErrorDetails, context: string): void {
  expect(details.infos, context).toHaveLength(1);
  expect(details.types[0], context).toBe(ERROR_INFO);
  for (const violation of details.violations) {
    expect(violation.description, context).not.toBe('');
  }
}

export interface ExpectedDetails {
  reason: string;
  domain: string;
  /** A field that must appear in a google.rpc.BadRequest detail. */
  field?: string;
  /** ErrorInfo metadata entries that must be present. */
  metadata?: Record<string, string>;
}

/** Asserts the details of an error: well formed, with the expected ErrorInfo and BadRequest field. */
export function expectDetails(
  details: ErrorDetails,
  expected: ExpectedDetails,
  context: string,
): void {
  expectWellFormedDetails(details, context);
  const [info] = details.infos;
  expect(info?.reason, context).toBe(expected.reason);
  expect(info?.domain, context).toBe(expected.domain);
  if (expected.metadata) {
    expect(info?.metadata, context).toMatchObject(expected.metadata);
  }
  if (expected.field !== undefined) {
    expect(details.types, context).toContain(BAD_REQUEST);
    expect(
      details.violations.map((v) => v.field),
      context,
    ).toContain(expected.field);
  }
}
