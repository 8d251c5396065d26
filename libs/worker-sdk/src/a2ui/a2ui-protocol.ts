import type { AgentExtension, JsonObject, JsonValue } from '@lib/a2a-protocol';

/**
 * The A2UI versions the SDK speaks over A2A (A2UI specification v0.9 / v0.9.1 and their A2A extension). Both
 * use the v0.9 message schemas and basic catalog; they differ in the extension URI and the DataPart media type.
 */
export const A2UI_VERSIONS = ['v0.9', 'v0.9.1'] as const;
export type A2uiVersion = (typeof A2UI_VERSIONS)[number];

/** The URI a client activates (`A2A-Extensions` / `X-A2A-Extensions`) and a card declares, per version. */
export const A2UI_EXTENSION_URIS: Readonly<Record<A2uiVersion, string>> = {
  'v0.9': 'https://a2ui.org/a2a-extension/a2ui/v0.9',
  'v0.9.1': 'https://a2ui.org/a2a-extension/a2ui/v0.9.1',
};

/** The `mediaType` that marks a DataPart as a list of A2UI messages, per version. */
export const A2UI_MEDIA_TYPES: Readonly<Record<A2uiVersion, string>> = {
  'v0.9': 'application/json+a2ui',
  'v0.9.1': 'application/a2ui+json',
};

/** The `catalogId` of the v0.9 basic catalog (`catalogs/basic/catalog.json` of the v0.9 schemas). */
export const A2UI_BASIC_CATALOG_ID =
  'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';

/**
 * The `version` every message the SDK builds carries. The v0.9.1 schemas accept `v0.9` as well, so one message
 * serves clients of either version.
 */
export const A2UI_MESSAGE_VERSION = 'v0.9';

/**
 * A component of a catalog: its `id`, its catalog type in `component` (`Text`, `TextField`, `Button`, …) and
 * that type's properties, e.g. `{ id: 'amount', component: 'TextField', label: 'Amount', value: { path: '/amount' } }`.
 */
export type A2uiComponent = { id: string; component: string } & { [property: string]: JsonValue };

// Type aliases, so that messages are JSON values (the `data` of a DataPart).

export type A2uiCreateSurface = {
  version: typeof A2UI_MESSAGE_VERSION;
  createSurface: {
    surfaceId: string;
    catalogId: string;
    theme?: JsonObject;
    sendDataModel?: boolean;
  };
};
export type A2uiUpdateComponents = {
  version: typeof A2UI_MESSAGE_VERSION;
  updateComponents: { surfaceId: string; components: A2uiComponent[] };
};
export type A2uiUpdateDataModel = {
  version: typeof A2UI_MESSAGE_VERSION;
  updateDataModel: { surfaceId: string; path?: string; value?: JsonValue };
};
export type A2uiDeleteSurface = {
  version: typeof A2UI_MESSAGE_VERSION;
  deleteSurface: { surfaceId: string };
};

/** A server-to-client A2UI message (`server_to_client.json`). */
export type A2uiServerMessage =
  | A2uiCreateSurface
  | A2uiUpdateComponents
  | A2uiUpdateDataModel
  | A2uiDeleteSurface;

/** What an agent declares about its A2UI support (`server_capabilities.json`): the card extension's params. */
export interface A2uiServerCapabilities {
  /** Defaults to the v0.9 basic catalog. */
  readonly supportedCatalogIds?: readonly string[];
  readonly acceptsInlineCatalogs?: boolean;
}

/**
 * The card's `capabilities.extensions` entries of an agent that renders with A2UI: one per version, not
 * required (a client that activates none gets text).
 */
export function a2uiAgentExtensions(capabilities: A2uiServerCapabilities = {}): AgentExtension[] {
  const params: JsonObject = {
    supportedCatalogIds: [...(capabilities.supportedCatalogIds ?? [A2UI_BASIC_CATALOG_ID])],
    ...(capabilities.acceptsInlineCatalogs === undefined
      ? {}
      : { acceptsInlineCatalogs: capabilities.acceptsInlineCatalogs }),
  };
  return A2UI_VERSIONS.map((version) => ({
    uri: A2UI_EXTENSION_URIS[version],
    description: `Renders forms and cards as A2UI ${version} (DataParts of media type ${A2UI_MEDIA_TYPES[version]})`,
    required: false,
    params,
  }));
}
