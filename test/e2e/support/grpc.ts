import {
  credentials,
  status as GrpcCode,
  Metadata,
  type ClientReadableStream,
  type ClientUnaryCall,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  a2aPb,
  decodeGrpcStatus,
  GRPC_STATUS_DETAILS_KEY,
  type ReceivedGrpcStatus,
} from '@lib/a2a-protocol';
import { expect } from 'vitest';

export { GrpcCode };

/** A client of the A2A gRPC binding, from the generated `A2AServiceClient`. */
export function a2aGrpcClient(target: string): a2aPb.A2AServiceClient {
  return new a2aPb.A2AServiceClient(target, credentials.createInsecure());
}

export interface CallOptions {
  /** `x-api-key`; `null` sends none. Default: the demo key. */
  apiKey?: string | null;
  /** `a2a-version`; `null` sends none. Default: `1.0`. */
  version?: string | null;
  /** `a2a-extensions`. */
  extensions?: string;
  /** `last-event-id`. */
  lastEventId?: string;
}

/** Request metadata carrying the service parameters. */
export function metadata(options: CallOptions = {}): Metadata {
  const md = new Metadata();
  const apiKey = options.apiKey === undefined ? 'demo-key' : options.apiKey;
  const version = options.version === undefined ? '1.0' : options.version;
  if (apiKey !== null) {
    md.set('x-api-key', apiKey);
  }
  if (version !== null) {
    md.set('a2a-version', version);
  }
  if (options.extensions !== undefined) {
    md.set('a2a-extensions', options.extensions);
  }
  if (options.lastEventId !== undefined) {
    md.set('last-event-id', options.lastEventId);
  }
  return md;
}

/** The outcome of a unary call: its value or its error, and the initial metadata the server sent. */
export type UnaryReply<T> =
  | { ok: true; value: T; headers: Metadata | undefined }
  | { ok: false; error: ServiceError; headers: Metadata | undefined };

type Callback<T> = (error: ServiceError | null, value: T) => void;

/** Runs one unary call, e.g. `unary<Task>((md, cb) => client.getTask(request, md, cb))`. */
export function unary<T>(
  invoke: (md: Metadata, callback: Callback<T>) => ClientUnaryCall,
  options: CallOptions = {},
): Promise<UnaryReply<T>> {
  return new Promise((resolve) => {
    let headers: Metadata | undefined;
    const call = invoke(metadata(options), (error, value) =>
      resolve(error ? { ok: false, error, headers } : { ok: true, value, headers }),
    );
    call.on('metadata', (md: Metadata) => {
      headers = md;
    });
  });
}

/** The value of a successful unary call (fails the test with the status otherwise). */
export function valueOf<T>(reply: UnaryReply<T>): T {
  if (!reply.ok) {
    throw new Error(`expected success, got ${reply.error.code} ${reply.error.details}`);
  }
  return reply.value;
}

/** Everything a server-streaming call delivered, and how it ended. */
export interface StreamResult<T> {
  messages: T[];
  /** `null` when the call ended with OK. */
  error: ServiceError | null;
  headers: Metadata | undefined;
}

/** Reads a server stream to its end. */
export function collect<T>(stream: ClientReadableStream<T>): Promise<StreamResult<T>> {
  return new Promise((resolve) => {
    const messages: T[] = [];
    let headers: Metadata | undefined;
    let error: ServiceError | null = null;
    stream.on('metadata', (md: Metadata) => {
      headers = md;
    });
    stream.on('data', (message: T) => messages.push(message));
    stream.on('error', (e: ServiceError) => {
      error = e;
    });
    stream.on('status', () => resolve({ messages, error, headers }));
  });
}

/** A unary call with raw request bytes (identity serializer), to send what no generated client would. */
export function rawUnary(
  client: a2aPb.A2AServiceClient,
  method: string,
  body: Buffer,
  options: CallOptions = {},
): Promise<UnaryReply<Buffer>> {
  return unary<Buffer>(
    (md, callback) =>
      client.makeUnaryRequest(
        `/lf.a2a.v1.A2AService/${method}`,
        (bytes: Buffer) => bytes,
        (bytes: Buffer) => bytes,
        body,
        md,
        (error, value) => callback(error, value ?? Buffer.alloc(0)),
      ),
    options,
  );
}

export interface ExpectedGrpcError {
  code: GrpcCode;
  reason: string;
  domain: string;
  /** A field that must appear in the google.rpc.BadRequest detail. */
  field?: string;
  /** ErrorInfo metadata entries that must be present. */
  metadata?: Record<string, string>;
}

/**
 * Asserts a gRPC error exactly (spec digest §8b, §9.3): the status code, and a `grpc-status-details-bin`
 * trailer holding a `google.rpc.Status` with the same code and message, ErrorInfo first, and BadRequest when a
 * field is expected. Returns the decoded status.
 */
export function expectGrpcError(
  error: ServiceError | null | undefined,
  expected: ExpectedGrpcError,
): ReceivedGrpcStatus {
  expect(error, 'the call must fail').toBeTruthy();
  const context = `status ${error?.code} ${error?.details}`;
  expect(error?.code, context).toBe(expected.code);
  const details = error?.metadata.get(GRPC_STATUS_DETAILS_KEY) ?? [];
  expect(details, context).toHaveLength(1);
  const bytes = details[0];
  if (!Buffer.isBuffer(bytes)) {
    throw new Error(`${GRPC_STATUS_DETAILS_KEY} is not binary (${context})`);
  }
  const status = decodeGrpcStatus(bytes);
  expect(status.code, context).toBe(expected.code);
  expect(status.message, context).toBe(error?.details);
  expect(status.detailTypes[0], context).toBe('type.googleapis.com/google.rpc.ErrorInfo');
  expect(status.errorInfo?.reason, context).toBe(expected.reason);
  expect(status.errorInfo?.domain, context).toBe(expected.domain);
  if (expected.metadata) {
    expect(status.errorInfo?.metadata, context).toMatchObject(expected.metadata);
  }
  if (expected.field !== undefined) {
    expect(status.detailTypes, context).toContain('type.googleapis.com/google.rpc.BadRequest');
    expect(
      status.fieldViolations.map((v) => v.field),
      context,
    ).toContain(expected.field);
  }
  return status;
}

/** The error of a failed unary call (fails the test when it succeeded). */
export function errorOf(reply: UnaryReply<unknown>): ServiceError {
  if (reply.ok) {
    throw new Error('expected an error, the call succeeded');
  }
  return reply.error;
}
