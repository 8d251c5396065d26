/**
 * The binary `google.rpc.Status` of the gRPC binding (spec digest §8b, §9.3): what `toGrpcStatus` builds, encoded
 * for the `grpc-status-details-bin` trailer, and read back from it.
 */
import {
  BAD_REQUEST_TYPE_URL,
  ERROR_INFO_TYPE_URL,
  type GrpcStatus,
  type GrpcStatusDetail,
} from './binding-errors';
import type { FieldViolation } from './errors';
import type { Any } from './generated/google/protobuf/any';
import { BadRequest, ErrorInfo } from './generated/google/rpc/error_details';
import { Status } from './generated/google/rpc/status';

/** The trailer that carries the binary `google.rpc.Status` of a failed call. */
export const GRPC_STATUS_DETAILS_KEY = 'grpc-status-details-bin';

/** `google.rpc.Status` as protobuf bytes, each detail packed in a `google.protobuf.Any`. */
export function encodeGrpcStatus(status: GrpcStatus): Buffer {
  return Buffer.from(
    Status.encode({
      code: status.code,
      message: status.message,
      details: status.details.map(packDetail),
    }).finish(),
  );
}

function packDetail(detail: GrpcStatusDetail): Any {
  if (detail.typeUrl === ERROR_INFO_TYPE_URL) {
    const info = ErrorInfo.encode({
      reason: detail.reason,
      domain: detail.domain,
      metadata: detail.metadata ?? {},
    });
    return { typeUrl: detail.typeUrl, value: Buffer.from(info.finish()) };
  }
  const badRequest = BadRequest.encode({
    fieldViolations: detail.fieldViolations.map((v) => ({
      field: v.field,
      description: v.description,
    })),
  });
  return { typeUrl: detail.typeUrl, value: Buffer.from(badRequest.finish()) };
}

/** A `google.rpc.Status` read from the wire; the reason is whatever the server sent. */
export interface ReceivedGrpcStatus {
  code: number;
  message: string;
  /** The `google.rpc.ErrorInfo` detail, when there is one. */
  errorInfo: { reason: string; domain: string; metadata: Record<string, string> } | undefined;
  /** The field violations of the `google.rpc.BadRequest` detail (empty without one). */
  fieldViolations: FieldViolation[];
  /** The type URL of every detail, in order (including types this reader does not unpack). */
  detailTypes: string[];
}

/** Decodes a `grpc-status-details-bin` value. Throws when the bytes are not a `google.rpc.Status`. */
export function decodeGrpcStatus(bytes: Uint8Array): ReceivedGrpcStatus {
  const status = Status.decode(bytes);
  const received: ReceivedGrpcStatus = {
    code: status.code,
    message: status.message,
    errorInfo: undefined,
    fieldViolations: [],
    detailTypes: status.details.map((d) => d.typeUrl),
  };
  for (const detail of status.details) {
    if (detail.typeUrl === ERROR_INFO_TYPE_URL && received.errorInfo === undefined) {
      const { reason, domain, metadata } = ErrorInfo.decode(detail.value);
      received.errorInfo = { reason, domain, metadata };
    } else if (detail.typeUrl === BAD_REQUEST_TYPE_URL) {
      const badRequest = BadRequest.decode(detail.value);
      received.fieldViolations.push(
        ...badRequest.fieldViolations.map((v) => ({ field: v.field, description: v.description })),
      );
    }
  }
  return received;
}
