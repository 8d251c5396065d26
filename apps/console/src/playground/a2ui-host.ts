import { basicCatalog, type LitComponentApi } from '@a2ui/lit/v0_9';
import {
  A2uiMessageSchema,
  Catalog,
  createFunctionImplementation,
  extractRefFields,
  MessageProcessor,
  type A2uiClientAction,
  type A2uiClientCapabilities,
  type A2uiClientDataModel,
  type A2uiMessage,
  type FunctionImplementation,
  type SurfaceModel,
} from '@a2ui/web_core/v0_9';
import type { JsonObject, Part } from './a2a-model';
import { LABELLED_FIELDS } from './a2ui-labelled-fields';
import { isObject } from './card-check';

/**
 * What the processor answers about the client (its capabilities, its surfaces' data) is plain JSON by the A2UI
 * schemas it was checked against; its zod types only say so less directly.
 */
function json(value: A2uiClientCapabilities | A2uiClientDataModel): JsonObject {
  return value as unknown as JsonObject;
}

/** The A2UI v0.9 A2A extension (a2ui.org `a2ui_extension_specification.md`). */
export const A2UI_EXTENSION_URI = 'https://a2ui.org/a2a-extension/a2ui/v0.9';

/** The media types of A2UI DataParts, with the protocol version each one carries. */
const A2UI_MEDIA_TYPES: Readonly<Record<string, 'v0.9' | 'v0.9.1'>> = {
  'application/json+a2ui': 'v0.9',
  'application/a2ui+json': 'v0.9.1',
};

/** How much agent UI one surface may hold: more is refused with a visible notice. */
export const SURFACE_LIMITS = { components: 500, depth: 20 } as const;

/** The A2UI media type of a part (its `mediaType`, or the older `metadata.mimeType`), or null. */
export function a2uiMediaType(part: Part): string | null {
  const declared = part.mediaType ?? part.metadata?.['mimeType'];
  return typeof declared === 'string' && declared in A2UI_MEDIA_TYPES && part.data !== undefined
    ? declared
    : null;
}

/** How to answer a surface: in the media type and version its agent used. */
export interface SurfaceOrigin {
  readonly mediaType: string;
  readonly version: 'v0.9' | 'v0.9.1';
}

interface GuardedSurface extends SurfaceOrigin {
  /** Component id → its type and the ids it refers to (children, child, tab contents). */
  readonly components: Map<string, { type: string; refs: string[] }>;
}

/**
 * Renders the A2UI surfaces agents send (A2UI v0.9 messages in A2A DataParts) with the official renderer's
 * message processor and basic catalog, and treats them as untrusted: a message is applied only when it is
 * valid, names catalog components only, keeps every surface within {@link SURFACE_LIMITS} (no cycle), and
 * shows images and links only from https (and data: images). What is refused becomes a notice.
 */
export class A2uiHost {
  readonly notices: string[] = [];
  private readonly processor: MessageProcessor<LitComponentApi>;
  private readonly surfaces = new Map<string, GuardedSurface>();

  constructor(
    onAction: (action: A2uiClientAction, origin: SurfaceOrigin) => void,
    private readonly onChange: () => void,
  ) {
    this.processor = new MessageProcessor(
      [guardedCatalog((notice) => this.notice(notice))],
      (action) => {
        const origin = this.surfaces.get(action.surfaceId);
        if (origin) {
          onAction(action, origin);
        }
      },
    );
    this.processor.onSurfaceDeleted((id) => this.surfaces.delete(id));
  }

  /** `a2uiClientCapabilities` of every message (the catalogs this console renders), as message metadata. */
  capabilities(): JsonObject {
    return json(this.processor.getClientCapabilities());
  }

  /** `a2uiClientDataModel`: the data of the surfaces that asked for it, if any, as message metadata. */
  dataModel(): JsonObject | undefined {
    const model = this.processor.getClientDataModel();
    return model === undefined ? undefined : json(model);
  }

  /** The live surfaces, in creation order. */
  get rendered(): SurfaceModel<LitComponentApi>[] {
    return [...this.processor.model.surfacesMap.values()];
  }

  /** Applies the A2UI messages of one DataPart, in order; a message that is refused does not stop the rest. */
  ingest(part: Part, mediaType: string): void {
    const version = A2UI_MEDIA_TYPES[mediaType] ?? 'v0.9';
    const data = part.data;
    const messages: unknown[] = Array.isArray(data)
      ? data
      : isObject(data) && Array.isArray(data['messages'])
        ? (data['messages'] as unknown[])
        : [data];
    for (const candidate of messages) {
      const parsed = A2uiMessageSchema.safeParse(candidate);
      if (!parsed.success) {
        this.notice(
          `Ignored an invalid A2UI message: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        );
        continue;
      }
      const message = parsed.data as A2uiMessage;
      const refusal = this.admit(message, { mediaType, version });
      if (refusal !== null) {
        this.notice(refusal);
        // Nothing of a refused surface stays on screen.
        if (
          'updateComponents' in message &&
          this.surfaces.has(message.updateComponents.surfaceId)
        ) {
          this.processor.processMessages([
            {
              version: message.version,
              deleteSurface: { surfaceId: message.updateComponents.surfaceId },
            },
          ]);
        }
        continue;
      }
      try {
        this.processor.processMessages([
          sanitized(parsed.data as A2uiMessage, (n) => this.notice(n)),
        ]);
      } catch (error) {
        this.notice(
          `Ignored an A2UI message: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    this.onChange();
  }

  /** Why the message may not be applied, or null; records the surface's new shape when it may. */
  private admit(message: A2uiMessage, origin: SurfaceOrigin): string | null {
    if ('createSurface' in message) {
      const { surfaceId, catalogId } = message.createSurface;
      if (catalogId !== basicCatalog.id) {
        return `Refused surface ${surfaceId}: catalog ${catalogId} is not one this console renders`;
      }
      if (!this.surfaces.has(surfaceId)) {
        this.surfaces.set(surfaceId, { ...origin, components: new Map() });
      }
      return null;
    }
    if (!('updateComponents' in message)) {
      return null;
    }
    const { surfaceId, components } = message.updateComponents;
    const surface = this.surfaces.get(surfaceId);
    if (!surface) {
      return `Ignored components for surface ${surfaceId}, which does not exist`;
    }
    const next = new Map(surface.components);
    for (const component of components) {
      const {
        id,
        component: declared,
        ...properties
      } = component as {
        id: string;
        component?: string;
      } & Record<string, unknown>;
      const type = declared ?? next.get(id)?.type;
      const api = type === undefined ? undefined : basicCatalog.components.get(type);
      if (!api || type === undefined) {
        return `Refused surface ${surfaceId}: component ${id} is of type ${String(type)}, not in the catalog`;
      }
      const valid = api.schema.safeParse(properties);
      if (!valid.success) {
        return `Refused surface ${surfaceId}: component ${id} (${type}) is invalid: ${valid.error.issues[0]?.message ?? ''}`;
      }
      const url = properties['url'];
      if (typeof url === 'string' && !safeUrl(url, type === 'Image')) {
        return `Refused surface ${surfaceId}: component ${id} (${type}) links to ${url.slice(0, 80)}; only https${type === 'Image' ? ' and data: images are' : ' is'} allowed`;
      }
      next.set(id, { type, refs: refsOf(api.schema, properties) });
    }
    if (next.size > SURFACE_LIMITS.components) {
      return `Refused surface ${surfaceId}: ${next.size} components, more than ${SURFACE_LIMITS.components}`;
    }
    const depth = depthOf(next);
    if (depth === null) {
      return `Refused surface ${surfaceId}: a component contains itself`;
    }
    if (depth > SURFACE_LIMITS.depth) {
      return `Refused surface ${surfaceId}: nested ${depth} deep, more than ${SURFACE_LIMITS.depth}`;
    }
    surface.components.clear();
    for (const [id, entry] of next) {
      surface.components.set(id, entry);
    }
    return null;
  }

  private notice(text: string): void {
    this.notices.push(text);
    this.onChange();
  }
}

/**
 * The basic catalog with its `openUrl` function limited to https (the catalog's own also opens http) and its
 * form fields named by their labels (a2ui-labelled-fields.ts).
 */
function guardedCatalog(notice: (text: string) => void): Catalog<LitComponentApi> {
  const functions = [...basicCatalog.functions.values()].map((fn): FunctionImplementation => {
    if (fn.name !== 'openUrl') {
      return fn;
    }
    return createFunctionImplementation(
      { name: fn.name, returnType: 'void', schema: fn.schema },
      (args: Record<string, unknown>, context) => {
        const url = typeof args['url'] === 'string' ? args['url'] : '';
        if (!safeUrl(url, false)) {
          notice(`Did not open ${url.slice(0, 80)}: only https links are opened`);
          return;
        }
        fn.execute(args, context);
      },
    );
  });
  const components = [...basicCatalog.components.values()].map(
    (component) => LABELLED_FIELDS.get(component.name) ?? component,
  );
  return new Catalog(basicCatalog.id, components, functions);
}

function safeUrl(url: string, image: boolean): boolean {
  const trimmed = url.trim().toLowerCase();
  return trimmed.startsWith('https://') || (image && trimmed.startsWith('data:image/'));
}

/** A string of the data model that names a URL scheme other than https (or a data: image) is dropped. */
const UNSAFE_SCHEME =
  /^\s*(?!https:|data:image\/)(javascript|vbscript|data|blob|file|filesystem|http|ftp|ws|wss):/i;

/** The message with data model strings that are unsafe URLs blanked (they may be bound to an image's url). */
function sanitized(message: A2uiMessage, notice: (text: string) => void): A2uiMessage {
  if (!('updateDataModel' in message)) {
    return message;
  }
  let dropped = 0;
  const clean = (value: unknown): unknown => {
    if (typeof value === 'string' && UNSAFE_SCHEME.test(value)) {
      dropped++;
      return '';
    }
    if (Array.isArray(value)) {
      return value.map(clean);
    }
    if (isObject(value)) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(v)]));
    }
    return value;
  };
  const value: unknown = clean(message.updateDataModel.value);
  if (dropped > 0) {
    notice(
      `Dropped ${dropped} value(s) of surface ${message.updateDataModel.surfaceId}: only https URLs are shown`,
    );
  }
  return { ...message, updateDataModel: { ...message.updateDataModel, value } };
}

/** The component ids a component's properties refer to, by the catalog schema's reference fields. */
function refsOf(schema: LitComponentApi['schema'], properties: Record<string, unknown>): string[] {
  const refs: string[] = [];
  const add = (value: unknown): void => {
    if (typeof value === 'string') {
      refs.push(value);
    } else if (isObject(value) && typeof value['componentId'] === 'string') {
      refs.push(value['componentId']);
    }
  };
  for (const [key, kind] of extractRefFields(schema)) {
    const value = properties[key];
    if (kind.kind === 'single') {
      add(value);
    } else if (kind.kind === 'list') {
      if (Array.isArray(value)) {
        value.forEach(add);
      } else {
        add(value);
      }
    } else if (Array.isArray(value)) {
      for (const item of value) {
        if (isObject(item)) {
          kind.keys.forEach((sub) => add(item[sub]));
        }
      }
    }
  }
  return refs;
}

/** The nesting depth below `root` (1 for a lone root), or null when a component contains itself. */
function depthOf(components: ReadonlyMap<string, { refs: string[] }>): number | null {
  const known = new Map<string, number | null>();
  const visit = (id: string, path: Set<string>): number | null => {
    if (path.has(id)) {
      return null;
    }
    const cached = known.get(id);
    if (cached !== undefined) {
      return cached;
    }
    const entry = components.get(id);
    if (!entry) {
      return 0;
    }
    path.add(id);
    let deepest = 0;
    for (const ref of entry.refs) {
      const below = visit(ref, path);
      if (below === null) {
        return null;
      }
      deepest = Math.max(deepest, below);
      if (deepest > SURFACE_LIMITS.depth) {
        break;
      }
    }
    path.delete(id);
    known.set(id, deepest + 1);
    return deepest + 1;
  };
  let depth = 0;
  for (const id of components.keys()) {
    const found = visit(id, new Set());
    if (found === null) {
      return null;
    }
    depth = Math.max(depth, found);
  }
  return depth;
}
