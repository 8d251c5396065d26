import { describe, expect, it } from 'vitest';
import { enums, fieldsOf, messages, type ParsedField } from '../test/support/a2a-proto';
import {
  A2A_MESSAGE_DESCRIPTORS,
  type FieldDescriptor,
  type FieldKind,
  type MessageDescriptor,
} from './proto-json';

/**
 * The ProtoJSON decoder's descriptor tables against proto/lf/a2a/v1/a2a.proto: every message the decoder
 * knows (the requests and everything they nest), every field's name, JSON name, type, label, oneof,
 * presence and REQUIRED behaviour. The proto is the one source of the model; a change there that the
 * tables do not follow fails here.
 */

/** Every descriptor reachable from the exported ones, by proto message name. */
function reachable(): Map<string, MessageDescriptor> {
  const found = new Map<string, MessageDescriptor>();
  const visit = (descriptor: MessageDescriptor): void => {
    const known = found.get(descriptor.name);
    if (known) {
      expect(known, `two descriptors named ${descriptor.name}`).toBe(descriptor);
      return;
    }
    found.set(descriptor.name, descriptor);
    for (const field of descriptor.fields) {
      if (field.kind.type === 'message') {
        visit(field.kind.descriptor);
      }
    }
  };
  Object.values(A2A_MESSAGE_DESCRIPTORS).forEach(visit);
  return found;
}

/** The proto type a field kind stands for. */
function protoType(kind: FieldKind): string {
  switch (kind.type) {
    case 'string':
    case 'int32':
    case 'bool':
    case 'bytes':
      return kind.type;
    case 'struct':
      return 'google.protobuf.Struct';
    case 'value':
      return 'google.protobuf.Value';
    case 'timestamp':
      return 'google.protobuf.Timestamp';
    case 'enum':
      return kind.name;
    case 'message':
      return kind.descriptor.name;
  }
}

/** The field as the proto declares it, written like {@link fromDescriptor}. */
function fromProto(field: ParsedField): string {
  const oneof = field.label.startsWith('oneof:') ? field.label.slice('oneof:'.length) : '';
  const cardinality =
    field.label === 'repeated' ? 'repeated' : field.label === 'map' ? 'map' : 'singular';
  const type =
    field.label === 'map'
      ? (/^map<\w+,([\w.]+)>$/.exec(field.type)?.[1] ?? field.type)
      : field.type;
  return [
    field.name,
    type,
    cardinality,
    oneof && `oneof ${oneof}`,
    field.label === 'optional' ? 'presence' : '',
    field.required ? 'REQUIRED' : '',
  ]
    .filter(Boolean)
    .join(' ');
}

function fromDescriptor(field: FieldDescriptor): string {
  return [
    field.proto,
    protoType(field.kind),
    field.cardinality ?? 'singular',
    field.oneof && `oneof ${field.oneof}`,
    field.presence ? 'presence' : '',
    field.required ? 'REQUIRED' : '',
  ]
    .filter(Boolean)
    .join(' ');
}

const descriptors = reachable();

describe('ProtoJSON descriptors match a2a.proto', () => {
  it('cover the requests and every message they nest', () => {
    expect([...descriptors.keys()].sort()).toStrictEqual(
      [
        'Artifact',
        'AuthenticationInfo',
        'CancelTaskRequest',
        'DeleteTaskPushNotificationConfigRequest',
        'GetExtendedAgentCardRequest',
        'GetTaskPushNotificationConfigRequest',
        'GetTaskRequest',
        'ListTaskPushNotificationConfigsRequest',
        'ListTasksRequest',
        'Message',
        'Part',
        'SendMessageConfiguration',
        'SendMessageRequest',
        'SubscribeToTaskRequest',
        'TaskPushNotificationConfig',
        'TaskStatus',
      ].sort(),
    );
    for (const name of descriptors.keys()) {
      expect(messages.has(name), `${name} is not a message of a2a.proto`).toBe(true);
    }
  });

  it.each([...descriptors.keys()])(
    '%s: the same fields, names, types, labels, oneofs, presence and REQUIRED',
    (name) => {
      const descriptor = descriptors.get(name) as MessageDescriptor;
      const proto = fieldsOf(name).filter((field) => !field.deprecated);
      expect(descriptor.fields.map(fromDescriptor).sort()).toStrictEqual(
        proto.map(fromProto).sort(),
      );
      for (const field of descriptor.fields) {
        expect(field.json, `${name}.${field.proto}`).toBe(
          field.proto.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()),
        );
      }
    },
  );

  it('enum fields list exactly the proto enum values, in order', () => {
    for (const descriptor of descriptors.values()) {
      for (const field of descriptor.fields) {
        if (field.kind.type === 'enum') {
          const body = enums.get(field.kind.name);
          expect(body, `enum ${field.kind.name} in a2a.proto`).toBeDefined();
          const values = [...(body ?? '').matchAll(/(\w+)\s*=\s*\d+/g)].map((m) => m[1]);
          expect(field.kind.values, `${descriptor.name}.${field.proto}`).toStrictEqual(values);
        }
      }
    }
  });
});
