import type { AgentCard, JsonObject, JsonValue } from './model';
import {
  fieldDescriptor as field,
  isDefaultValue,
  isPlainObject,
  messageKind as message,
  type FieldDescriptor,
  type FieldKind,
  type MessageDescriptor,
} from './proto-json';

// Output-side descriptors of the Agent Card messages (spec digest §4.5, §4.6). They carry exactly what field
// presence needs: REQUIRED, proto3 `optional`, repeated/map and the message types below.

const STRING: FieldKind = { type: 'string' };
const BOOL: FieldKind = { type: 'bool' };
const STRUCT: FieldKind = { type: 'struct' };

const REQUIRED = { required: true } as const;
const REPEATED = { cardinality: 'repeated' } as const;
const MAP = { cardinality: 'map' } as const;
const PRESENCE = { presence: true } as const;

const STRING_LIST: MessageDescriptor = {
  name: 'StringList',
  fields: [field('list', STRING, REPEATED)],
};

const SECURITY_REQUIREMENT: MessageDescriptor = {
  name: 'SecurityRequirement',
  fields: [field('schemes', message(STRING_LIST), MAP)],
};

const flow = (name: string, fields: FieldDescriptor[]): MessageDescriptor => ({ name, fields });
const scopes = (required: boolean): FieldDescriptor =>
  field('scopes', STRING, { ...MAP, required });

const OAUTH_FLOWS: MessageDescriptor = {
  name: 'OAuthFlows',
  fields: [
    field(
      'authorization_code',
      message(
        flow('AuthorizationCodeOAuthFlow', [
          field('authorization_url', STRING, REQUIRED),
          field('token_url', STRING, REQUIRED),
          field('refresh_url', STRING),
          scopes(true),
          field('pkce_required', BOOL),
        ]),
      ),
      { oneof: 'flow' },
    ),
    field(
      'client_credentials',
      message(
        flow('ClientCredentialsOAuthFlow', [
          field('token_url', STRING, REQUIRED),
          field('refresh_url', STRING),
          scopes(true),
        ]),
      ),
      { oneof: 'flow' },
    ),
    field(
      'implicit',
      message(
        flow('ImplicitOAuthFlow', [
          field('authorization_url', STRING),
          field('refresh_url', STRING),
          scopes(false),
        ]),
      ),
      { oneof: 'flow' },
    ),
    field(
      'password',
      message(
        flow('PasswordOAuthFlow', [
          field('token_url', STRING),
          field('refresh_url', STRING),
          scopes(false),
        ]),
      ),
      { oneof: 'flow' },
    ),
    field(
      'device_code',
      message(
        flow('DeviceCodeOAuthFlow', [
          field('device_authorization_url', STRING, REQUIRED),
          field('token_url', STRING, REQUIRED),
          field('refresh_url', STRING),
          scopes(true),
        ]),
      ),
      { oneof: 'flow' },
    ),
  ],
};

const description = field('description', STRING);

const SECURITY_SCHEME: MessageDescriptor = {
  name: 'SecurityScheme',
  fields: [
    field(
      'api_key_security_scheme',
      message({
        name: 'APIKeySecurityScheme',
        fields: [description, field('location', STRING, REQUIRED), field('name', STRING, REQUIRED)],
      }),
      { oneof: 'scheme' },
    ),
    field(
      'http_auth_security_scheme',
      message({
        name: 'HTTPAuthSecurityScheme',
        fields: [description, field('scheme', STRING, REQUIRED), field('bearer_format', STRING)],
      }),
      { oneof: 'scheme' },
    ),
    field(
      'oauth2_security_scheme',
      message({
        name: 'OAuth2SecurityScheme',
        fields: [
          description,
          field('flows', message(OAUTH_FLOWS), REQUIRED),
          field('oauth2_metadata_url', STRING),
        ],
      }),
      { oneof: 'scheme' },
    ),
    field(
      'open_id_connect_security_scheme',
      message({
        name: 'OpenIdConnectSecurityScheme',
        fields: [description, field('open_id_connect_url', STRING, REQUIRED)],
      }),
      { oneof: 'scheme' },
    ),
    field(
      'mtls_security_scheme',
      message({ name: 'MutualTlsSecurityScheme', fields: [description] }),
      { oneof: 'scheme' },
    ),
  ],
};

const AGENT_INTERFACE: MessageDescriptor = {
  name: 'AgentInterface',
  fields: [
    field('url', STRING, REQUIRED),
    field('protocol_binding', STRING, REQUIRED),
    field('tenant', STRING),
    field('protocol_version', STRING, REQUIRED),
  ],
};

const AGENT_PROVIDER: MessageDescriptor = {
  name: 'AgentProvider',
  fields: [field('url', STRING, REQUIRED), field('organization', STRING, REQUIRED)],
};

const AGENT_EXTENSION: MessageDescriptor = {
  name: 'AgentExtension',
  fields: [field('uri', STRING), description, field('required', BOOL), field('params', STRUCT)],
};

const AGENT_CAPABILITIES: MessageDescriptor = {
  name: 'AgentCapabilities',
  fields: [
    field('streaming', BOOL, PRESENCE),
    field('push_notifications', BOOL, PRESENCE),
    field('extensions', message(AGENT_EXTENSION), REPEATED),
    field('extended_agent_card', BOOL, PRESENCE),
  ],
};

const AGENT_SKILL: MessageDescriptor = {
  name: 'AgentSkill',
  fields: [
    field('id', STRING, REQUIRED),
    field('name', STRING, REQUIRED),
    field('description', STRING, REQUIRED),
    field('tags', STRING, { ...REPEATED, ...REQUIRED }),
    field('examples', STRING, REPEATED),
    field('input_modes', STRING, REPEATED),
    field('output_modes', STRING, REPEATED),
    field('security_requirements', message(SECURITY_REQUIREMENT), REPEATED),
  ],
};

const AGENT_CARD_SIGNATURE: MessageDescriptor = {
  name: 'AgentCardSignature',
  fields: [
    field('protected', STRING, REQUIRED),
    field('signature', STRING, REQUIRED),
    field('header', STRUCT),
  ],
};

/** The AgentCard message (spec digest §4.5). */
const AGENT_CARD_DESCRIPTOR: MessageDescriptor = {
  name: 'AgentCard',
  fields: [
    field('name', STRING, REQUIRED),
    field('description', STRING, REQUIRED),
    field('supported_interfaces', message(AGENT_INTERFACE), { ...REPEATED, ...REQUIRED }),
    field('provider', message(AGENT_PROVIDER)),
    field('version', STRING, REQUIRED),
    field('documentation_url', STRING, PRESENCE),
    field('capabilities', message(AGENT_CAPABILITIES), REQUIRED),
    field('security_schemes', message(SECURITY_SCHEME), MAP),
    field('security_requirements', message(SECURITY_REQUIREMENT), REPEATED),
    field('default_input_modes', STRING, { ...REPEATED, ...REQUIRED }),
    field('default_output_modes', STRING, { ...REPEATED, ...REQUIRED }),
    field('skills', message(AGENT_SKILL), { ...REPEATED, ...REQUIRED }),
    field('signatures', message(AGENT_CARD_SIGNATURE), REPEATED),
    field('icon_url', STRING, PRESENCE),
  ],
};

/**
 * The ProtoJSON of `value` as a `descriptor` message, honouring field presence the way card signing needs it
 * (spec digest §3, §10.12 step 1): REQUIRED fields always (their default when unset), proto3 `optional` fields
 * and oneof members iff set, message fields iff set, every other field only when it differs from its default
 * (`""`, `0`, `false`, `[]`, `{}`). Members the descriptor does not know are dropped; output keys follow the
 * descriptor's field order.
 */
function encodeWithPresence(descriptor: MessageDescriptor, value: unknown): JsonObject {
  const source = isPlainObject(value) ? value : {};
  const out: JsonObject = {};
  for (const f of descriptor.fields) {
    const raw = source[f.json] ?? source[f.proto];
    const encoded = encodeField(f, raw);
    if (encoded !== undefined) {
      out[f.json] = encoded;
    }
  }
  return out;
}

/** The card as ProtoJSON with presence honoured (spec digest §10.12 step 1). */
export function agentCardProtoJson(card: AgentCard): AgentCard {
  // Encoding keeps every field of a valid card, so the result still has the AgentCard shape.
  return encodeWithPresence(AGENT_CARD_DESCRIPTOR, card) as unknown as AgentCard;
}

function encodeField(f: FieldDescriptor, raw: unknown): JsonValue | undefined {
  const required = f.required === true;
  if (f.cardinality === 'repeated') {
    const items = Array.isArray(raw) ? (raw as unknown[]) : [];
    return items.length > 0 || required
      ? items.map((item) => encodeValue(f.kind, item))
      : undefined;
  }
  if (f.cardinality === 'map') {
    const entries = isPlainObject(raw) ? Object.entries(raw) : [];
    if (entries.length === 0 && !required) {
      return undefined;
    }
    const map: JsonObject = {};
    for (const [key, item] of entries) {
      map[key] = encodeValue(f.kind, item);
    }
    return map;
  }
  if (raw === undefined || raw === null) {
    return required ? encodeValue(f.kind, defaultOf(f.kind)) : undefined;
  }
  const explicit = required || f.presence === true || f.oneof !== undefined;
  return explicit || !isDefaultValue(f.kind, raw) ? encodeValue(f.kind, raw) : undefined;
}

function encodeValue(kind: FieldKind, value: unknown): JsonValue {
  return kind.type === 'message'
    ? encodeWithPresence(kind.descriptor, value)
    : (value as JsonValue);
}

function defaultOf(kind: FieldKind): unknown {
  switch (kind.type) {
    case 'string':
    case 'bytes':
      return '';
    case 'int32':
      return 0;
    case 'bool':
      return false;
    case 'enum':
      return kind.values[0];
    case 'message':
    case 'struct':
      return {};
    case 'value':
      return null;
    case 'timestamp':
      return '1970-01-01T00:00:00Z';
  }
}
