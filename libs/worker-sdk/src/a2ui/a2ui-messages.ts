import type { JsonObject, JsonValue, Message, Part } from '@lib/a2a-protocol';
import { randomUUID } from 'node:crypto';
import { agentMessage, textPart, type MessageScope } from '../agent-messages';
import {
  A2UI_BASIC_CATALOG_ID,
  A2UI_EXTENSION_URIS,
  A2UI_MEDIA_TYPES,
  A2UI_MESSAGE_VERSION,
  type A2uiComponent,
  type A2uiCreateSurface,
  type A2uiDeleteSurface,
  type A2uiServerMessage,
  type A2uiUpdateComponents,
  type A2uiUpdateDataModel,
  type A2uiVersion,
} from './a2ui-protocol';

export interface CreateSurfaceOptions {
  /** Defaults to the v0.9 basic catalog. */
  readonly catalogId?: string;
  readonly theme?: JsonObject;
  /** The client then sends the surface's data model with every message (`a2uiClientDataModel`). */
  readonly sendDataModel?: boolean;
}

/** `createSurface`: the client creates the surface; components and data follow. */
export function createSurface(
  surfaceId: string,
  options: CreateSurfaceOptions = {},
): A2uiCreateSurface {
  return {
    version: A2UI_MESSAGE_VERSION,
    createSurface: {
      surfaceId,
      catalogId: options.catalogId ?? A2UI_BASIC_CATALOG_ID,
      ...(options.theme === undefined ? {} : { theme: options.theme }),
      ...(options.sendDataModel === undefined ? {} : { sendDataModel: options.sendDataModel }),
    },
  };
}

/** `updateComponents`: adds or replaces components of the surface; one of them must be `root` at first. */
export function updateComponents(
  surfaceId: string,
  components: readonly A2uiComponent[],
): A2uiUpdateComponents {
  return {
    version: A2UI_MESSAGE_VERSION,
    updateComponents: { surfaceId, components: [...components] },
  };
}

/**
 * `updateDataModel`: sets the value at `path` (a JSON Pointer; the whole model when absent), or removes the
 * key at `path` when `value` is absent.
 */
export function updateDataModel(
  surfaceId: string,
  change: { readonly path?: string; readonly value?: JsonValue },
): A2uiUpdateDataModel {
  return {
    version: A2UI_MESSAGE_VERSION,
    updateDataModel: {
      surfaceId,
      ...(change.path === undefined ? {} : { path: change.path }),
      ...(change.value === undefined ? {} : { value: change.value }),
    },
  };
}

/** `deleteSurface`: the client removes the surface. */
export function deleteSurface(surfaceId: string): A2uiDeleteSurface {
  return { version: A2UI_MESSAGE_VERSION, deleteSurface: { surfaceId } };
}

/**
 * The DataPart carrying A2UI messages: `data` is the list of messages (the client applies them in order),
 * `mediaType` marks it as A2UI of the version the client activated.
 */
export function a2uiPart(version: A2uiVersion, messages: readonly A2uiServerMessage[]): Part {
  return { data: [...messages], mediaType: A2UI_MEDIA_TYPES[version] };
}

/**
 * A ROLE_AGENT message for a client that activated A2UI: the text (what a client that does not render A2UI
 * shows), then one DataPart with the messages; `extensions` names the A2UI extension it uses. For a status
 * update (e.g. TASK_STATE_INPUT_REQUIRED with a form): `events.publish({ kind: 'status', status: { state,
 * message } })`.
 */
export function a2uiAgentMessage(
  scope: MessageScope,
  version: A2uiVersion,
  text: string,
  messages: readonly A2uiServerMessage[],
  newId: () => string = randomUUID,
): Message {
  return {
    ...agentMessage(scope, [textPart(text), a2uiPart(version, messages)], newId),
    extensions: [A2UI_EXTENSION_URIS[version]],
  };
}
