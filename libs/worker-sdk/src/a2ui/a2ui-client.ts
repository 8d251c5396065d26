import type { JsonObject, JsonValue, Message, Part } from '@lib/a2a-protocol';
import {
  A2UI_EXTENSION_URIS,
  A2UI_MEDIA_TYPES,
  A2UI_VERSIONS,
  type A2uiVersion,
} from './a2ui-protocol';

/** A user's action on a surface (`client_to_server.json` `action`, or the v0.8 `userAction`). */
export interface A2uiAction {
  /** The name of the component's `action.event`. */
  readonly name: string;
  readonly surfaceId: string;
  readonly sourceComponentId: string;
  /** ISO 8601, as the client sent it ('' when it sent none). */
  readonly timestamp: string;
  /** The event's context with its data bindings resolved by the client. */
  readonly context: JsonObject;
  /** The shape it arrived in: v0.9 `action` or v0.8 `userAction`. */
  readonly shape: 'action' | 'userAction';
}

/** What the client can render (`metadata.a2uiClientCapabilities`, `client_capabilities.json`). */
export interface A2uiClientCapabilities {
  /** The version whose key carried them. */
  readonly version: A2uiVersion;
  readonly supportedCatalogIds: readonly string[];
  readonly inlineCatalogs: readonly JsonObject[];
}

const A2UI_MEDIA_TYPE_SET: ReadonlySet<string> = new Set(Object.values(A2UI_MEDIA_TYPES));

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function strings(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v) => typeof v === 'string') : [];
}

/**
 * The A2UI version the client activated for this message, or null: the platform records the extensions a
 * request activated (`A2A-Extensions` or `X-A2A-Extensions`) that the agent declares in the message's
 * `extensions`. v0.9.1 wins when both are.
 */
export function activatedA2uiVersion(message: Message): A2uiVersion | null {
  const listed = message.extensions ?? [];
  return (
    [...A2UI_VERSIONS].reverse().find((version) => listed.includes(A2UI_EXTENSION_URIS[version])) ??
    null
  );
}

/** The client's `metadata.a2uiClientCapabilities` (the v0.9.1 key before the v0.9 one), or null. */
export function readA2uiClientCapabilities(message: Message): A2uiClientCapabilities | null {
  const capabilities = message.metadata?.['a2uiClientCapabilities'];
  if (!isObject(capabilities)) {
    return null;
  }
  for (const version of [...A2UI_VERSIONS].reverse()) {
    const entry = capabilities[version];
    if (isObject(entry)) {
      return {
        version,
        supportedCatalogIds: strings(entry['supportedCatalogIds']),
        inlineCatalogs: Array.isArray(entry['inlineCatalogs'])
          ? entry['inlineCatalogs'].filter(isObject)
          : [],
      };
    }
  }
  return null;
}

/** The media type a part is marked with: `mediaType`, or the A2A 0.3 `metadata.mimeType`. */
function markedType(part: Part): string | undefined {
  const mimeType = part.metadata?.['mimeType'];
  return part.mediaType ?? (typeof mimeType === 'string' ? mimeType : undefined);
}

/** Whether the part is marked as A2UI (either version's media type). */
export function isA2uiPart(part: Part): boolean {
  return A2UI_MEDIA_TYPE_SET.has(markedType(part) ?? '');
}

function actionOf(message: JsonValue): A2uiAction | null {
  if (!isObject(message)) {
    return null;
  }
  const shape = isObject(message['action'])
    ? 'action'
    : isObject(message['userAction'])
      ? 'userAction'
      : null;
  const body = shape === null ? undefined : message[shape];
  if (shape === null || !isObject(body)) {
    return null;
  }
  const { name, surfaceId, sourceComponentId, timestamp, context } = body;
  if (typeof name !== 'string' || typeof surfaceId !== 'string') {
    return null;
  }
  return {
    name,
    surfaceId,
    sourceComponentId: typeof sourceComponentId === 'string' ? sourceComponentId : '',
    timestamp: typeof timestamp === 'string' ? timestamp : '',
    context: isObject(context) ? context : {},
    shape,
  };
}

/**
 * The user's actions in the message, in order: from DataParts marked as A2UI or not marked at all, whose
 * `data` is a list of client messages (v0.9) or a single one (v0.8 sends `{ "userAction": … }` alone).
 * Client errors and anything that is not an action are skipped.
 */
export function readA2uiActions(message: Message): A2uiAction[] {
  return message.parts.flatMap((part) => {
    if (part.data === undefined || (markedType(part) !== undefined && !isA2uiPart(part))) {
      return [];
    }
    const messages = Array.isArray(part.data) ? part.data : [part.data];
    return messages.flatMap((m) => actionOf(m) ?? []);
  });
}
