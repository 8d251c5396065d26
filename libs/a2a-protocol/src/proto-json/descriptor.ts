/** The shape of the descriptor tables the ProtoJSON decoder walks, and the limits it enforces. */

/** Limits that keep one request from costing the server too much. Exceeding one is a violation. */
export interface ProtoJsonLimits {
  /** Most parts one Message or Artifact may carry. */
  maxPartsPerMessage: number;
  /** Deepest nesting of arrays and objects inside a Struct or Value (the outer container counts as 1). */
  maxJsonDepth: number;
  /** Largest `metadata` object, in UTF-8 bytes of its JSON text. */
  maxMetadataBytes: number;
  /** Longest `Part.text`, in UTF-16 code units (JavaScript string length). */
  maxTextPartLength: number;
  /**
   * Longest client-chosen identifier (`messageId`, `contextId`, task and config ids), in UTF-16 code units.
   * Identifiers are index keys in Postgres, whose B-tree entries cannot exceed about 2.7 kB; 512 code units
   * are at most 1.5 kB of UTF-8.
   */
  maxIdLength: number;
  /** Most violations listed in one error; the remainder is summarised so the error stays small. */
  maxViolations: number;
}

export const DEFAULT_PROTO_JSON_LIMITS: Readonly<ProtoJsonLimits> = {
  maxPartsPerMessage: 64,
  maxJsonDepth: 32,
  maxMetadataBytes: 64 * 1024,
  maxTextPartLength: 1024 * 1024,
  maxIdLength: 512,
  maxViolations: 100,
};

/** The limits a single field can be guarded by; each name has exactly one meaning (see {@link ProtoJsonLimits}). */
export type FieldLimit =
  | 'maxPartsPerMessage'
  | 'maxMetadataBytes'
  | 'maxTextPartLength'
  | 'maxIdLength';

/** What a field holds. `struct` is `google.protobuf.Struct`, `value` is `google.protobuf.Value`. */
export type FieldKind =
  | { readonly type: 'string' }
  | { readonly type: 'int32' }
  | { readonly type: 'bool' }
  | { readonly type: 'enum'; readonly name: string; readonly values: readonly string[] }
  | { readonly type: 'message'; readonly descriptor: MessageDescriptor }
  | { readonly type: 'struct' }
  | { readonly type: 'value' }
  | { readonly type: 'timestamp' }
  | { readonly type: 'bytes' };

/** What a descriptor table says of a field beyond its names and kind. */
export type FieldOptions = Omit<FieldDescriptor, 'proto' | 'json' | 'kind'>;

/** A field by its proto name; its JSON name is the lowerCamelCase of it (ProtoJSON's rule). */
export function fieldDescriptor(
  proto: string,
  kind: FieldKind,
  options: FieldOptions = {},
): FieldDescriptor {
  const json = proto.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
  return { proto, json, kind, ...options };
}

/** The kind of a field holding the message `descriptor` describes. */
export function messageKind(descriptor: MessageDescriptor): FieldKind {
  return { type: 'message', descriptor };
}

export interface FieldDescriptor {
  /** The proto (snake_case) name, also accepted on input. */
  readonly proto: string;
  /** The lowerCamelCase JSON name used on output and in violation paths. */
  readonly json: string;
  readonly kind: FieldKind;
  /** `repeated` is a JSON array, `map` a JSON object with string keys (`map<string, kind>`). */
  readonly cardinality?: 'singular' | 'repeated' | 'map';
  /** Name of the oneof group this field belongs to. */
  readonly oneof?: string;
  /** `google.api.field_behavior = REQUIRED`: present and not the default value (§3). */
  readonly required?: boolean;
  /** proto3 `optional`: a default value is kept on output instead of being dropped. */
  readonly presence?: boolean;
  /** Inclusive bounds for an `int32`. */
  readonly min?: number;
  readonly max?: number;
  readonly limit?: FieldLimit;
}

/** A check that spans fields; `report` takes a path relative to the message being decoded. */
export type MessageRule = (
  value: DecodedMessage,
  report: (field: string, description: string) => void,
) => void;

export interface MessageDescriptor {
  /** The proto message name, used in descriptions. */
  readonly name: string;
  readonly fields: readonly FieldDescriptor[];
  /** Oneof groups of which exactly one member must be set. */
  readonly requiredOneofs?: readonly string[];
  readonly rules?: readonly MessageRule[];
}

/** A decoded message before it is narrowed to its model type. */
export type DecodedMessage = { [field: string]: unknown };
