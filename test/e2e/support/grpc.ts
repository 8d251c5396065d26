/**
 * The gRPC binding on the wire (spec digest §8b): clients, request metadata, unary and server-streaming calls
 * (also with raw request bytes), and the `google.rpc.Status` of an error decoded from
 * `grpc-status-details-bin` (§9.3) by its own reader of the proto's field numbers, not by the platform's
 * codec.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import {
  credentials,
  status as GrpcCode,
  Metadata,
  type ChannelOptions,
  type Client,
  type ClientReadableStream,
  type ClientUnaryCall,
  type ServiceError,
} from '@grpc/grpc-js';
import { a2aPb } from '@lib/a2a-protocol';
import { expect } from 'vitest';
import {
  BAD_REQUEST,
  ERROR_INFO,
  expectDetails,
  serviceHeaders,
  type ErrorDetails,
  type ExpectedDetails,
  type ServiceParams,
} from './wire';

export { GrpcCode };

const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

/** A client of the A2A gRPC binding, from the generated `A2AServiceClient`. */
export function a2aGrpcClient(target: string, options?: ChannelOptions): a2aPb.A2AServiceClient {
  return new a2aPb.A2AServiceClient(target, credentials.createInsecure(), options);
}

/** The full method path of an RPC of `lf.a2a.v1.A2AService`. */
export const a2aMethodPath = (method: string): string => `/lf.a2a.v1.A2AService/${method}`;

const CODE_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(GrpcCode)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
    .map(([name, code]) => [code, name]),
);

/** The canonical name of a status code (`NOT_FOUND`). */
export const grpcCodeName = (code: number): string => CODE_NAMES[code] ?? String(code);

export interface GrpcCallOptions extends ServiceParams {
  /** Deadline of the call from now; none when absent. */
  deadlineMs?: number;
}

/** Request metadata carrying the service parameters (and any extra entries given as `headers`). */
export function metadata(options: ServiceParams = {}): Metadata {
  const md = new Metadata();
  for (const [key, value] of Object.entries(serviceHeaders(options))) {
    md.set(key.toLowerCase(), value);
  }
  return md;
}

const callOptions = (options: GrpcCallOptions) =>
  options.deadlineMs === undefined ? {} : { deadline: Date.now() + options.deadlineMs };

/** The outcome of a unary call: its value or its error, and the initial metadata the server sent. */
export type UnaryReply<T> =
  | { ok: true; value: T; headers: Metadata | undefined }
  | { ok: false; error: ServiceError; headers: Metadata | undefined };

type Callback<T> = (error: ServiceError | null, value: T) => void;

/** Runs one unary call, e.g. `unary<Task>((md, cb) => client.getTask(request, md, cb))`. */
export function unary<T>(
  invoke: (md: Metadata, callback: Callback<T>) => ClientUnaryCall,
  options: ServiceParams = {},
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

/** The error of a failed unary call (fails the test when it succeeded). */
export function errorOf(reply: UnaryReply<unknown>): ServiceError {
  if (reply.ok) {
    throw new Error('expected an error, the call succeeded');
  }
  return reply.error;
}

/** Everything a server-streaming call delivered, and how it ended. */
export interface StreamResult<T> {
  messages: T[];
  /** `null` when the call ended with OK. */
  error: ServiceError | null;
  headers: Metadata | undefined;
}

/** Reads a server stream to its end, telling `onMessage` of each message as it arrives. */
export function collect<T>(
  stream: ClientReadableStream<T>,
  onMessage: (message: T) => void = () => undefined,
): Promise<StreamResult<T>> {
  return new Promise((resolve) => {
    const messages: T[] = [];
    let headers: Metadata | undefined;
    let error: ServiceError | null = null;
    stream.on('metadata', (md: Metadata) => {
      headers = md;
    });
    stream.on('data', (message: T) => {
      messages.push(message);
      onMessage(message);
    });
    stream.on('error', (e: ServiceError) => {
      error = e;
    });
    stream.on('status', () => resolve({ messages, error, headers }));
  });
}

const identity = (bytes: Buffer): Buffer => bytes;

/** A unary call with raw request bytes to a method path, to send what no generated client would. */
export function rawUnary(
  client: Client,
  path: string,
  body: Uint8Array,
  options: GrpcCallOptions = {},
): Promise<UnaryReply<Buffer>> {
  return unary<Buffer>(
    (md, callback) =>
      client.makeUnaryRequest(
        path,
        identity,
        identity,
        Buffer.from(body),
        md,
        callOptions(options),
        (error, value) => callback(error, value ?? Buffer.alloc(0)),
      ),
    options,
  );
}

/** A server-streaming call with raw request bytes to a method path, read to its end. */
export function rawServerStream(
  client: Client,
  path: string,
  body: Uint8Array,
  options: GrpcCallOptions = {},
  onMessage?: (message: Buffer) => void,
): Promise<StreamResult<Buffer>> {
  const stream = client.makeServerStreamRequest(
    path,
    identity,
    identity,
    Buffer.from(body),
    metadata(options),
    callOptions(options),
  );
  return collect(stream, onMessage);
}

/** A `google.rpc.Status` as it came in `grpc-status-details-bin`. */
export interface DecodedStatus {
  code: number;
  message: string;
  details: ErrorDetails;
}

interface Field {
  no: number;
  bytes?: Uint8Array;
  varint?: number;
}

/** The varint and length-delimited fields of one message, in order (others skipped). */
function fieldsOf(bytes: Uint8Array): Field[] {
  const reader = new BinaryReader(bytes);
  const fields: Field[] = [];
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    if (wireType === WireType.LengthDelimited) {
      fields.push({ no, bytes: reader.bytes() });
    } else if (wireType === WireType.Varint) {
      fields.push({ no, varint: reader.int32() });
    } else {
      reader.skip(wireType);
    }
  }
  return fields;
}

const text = (fields: Field[], no: number): string =>
  new TextDecoder().decode(fields.find((f) => f.no === no)?.bytes);

/**
 * google.rpc.Status{code=1, message=2, details=3: Any{type_url=1, value=2}}, with ErrorInfo{reason=1,
 * domain=2, metadata=3: entries {key=1, value=2}} and BadRequest{field_violations=1: {field=1,
 * description=2}} decoded.
 */
export function decodeStatus(bin: Uint8Array): DecodedStatus {
  const status = fieldsOf(bin);
  const details: ErrorDetails = { types: [], infos: [], violations: [] };
  for (const any of status.filter((f) => f.no === 3)) {
    const anyFields = fieldsOf(any.bytes ?? new Uint8Array());
    const typeUrl = text(anyFields, 1);
    const value = fieldsOf(anyFields.find((f) => f.no === 2)?.bytes ?? new Uint8Array());
    details.types.push(typeUrl);
    if (typeUrl === ERROR_INFO) {
      const metadata: Record<string, string> = {};
      for (const entry of value.filter((f) => f.no === 3)) {
        const kv = fieldsOf(entry.bytes ?? new Uint8Array());
        metadata[text(kv, 1)] = text(kv, 2);
      }
      details.infos.push({ reason: text(value, 1), domain: text(value, 2), metadata });
    } else if (typeUrl === BAD_REQUEST) {
      for (const violation of value.filter((f) => f.no === 1)) {
        const fields = fieldsOf(violation.bytes ?? new Uint8Array());
        details.violations.push({ field: text(fields, 1), description: text(fields, 2) });
      }
    }
  }
  return {
    code: status.find((f) => f.no === 1)?.varint ?? 0,
    message: text(status, 2),
    details,
  };
}

/**
 * The `google.rpc.Status` an error carries, or undefined when it has none; when it has one, it must be the
 * only `grpc-status-details-bin` value and agree with the call's status code and message.
 */
export function statusOf(error: ServiceError): DecodedStatus | undefined {
  const values = error.metadata?.get(STATUS_DETAILS_KEY) ?? [];
  if (values.length === 0) {
    return undefined;
  }
  const context = `status ${error.code} ${error.details}`;
  expect(values, context).toHaveLength(1);
  const [bin] = values;
  if (!Buffer.isBuffer(bin)) {
    throw new Error(`${STATUS_DETAILS_KEY} is not binary (${context})`);
  }
  const status = decodeStatus(bin);
  expect(status.code, context).toBe(error.code);
  expect(status.message, context).toBe(error.details);
  return status;
}

export interface ExpectedGrpcError extends ExpectedDetails {
  code: GrpcCode;
}

/**
 * Asserts a gRPC error exactly (spec digest §8b, §9.3): the status code, and a `grpc-status-details-bin`
 * trailer holding a `google.rpc.Status` with the same code and message, ErrorInfo first, and BadRequest when a
 * field is expected. Returns the decoded status.
 */
export function expectGrpcError(
  error: ServiceError | null | undefined,
  expected: ExpectedGrpcError,
): DecodedStatus {
  if (!error) {
    throw new Error('the call must fail');
  }
  const context = `status ${error.code} ${error.details}`;
  expect(error.code, context).toBe(expected.code);
  const status = statusOf(error);
  if (status === undefined) {
    throw new Error(`no ${STATUS_DETAILS_KEY} (${context})`);
  }
  expectDetails(status.details, expected, context);
  return status;
}
