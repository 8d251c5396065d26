import type { Message } from '@lib/a2a-protocol';
import { loadA2uiSchemas, repoRoot } from '@lib/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  activatedA2uiVersion,
  isA2uiPart,
  readA2uiActions,
  readA2uiClientCapabilities,
} from './a2ui-client';
import {
  a2uiAgentMessage,
  a2uiPart,
  createSurface,
  deleteSurface,
  updateComponents,
  updateDataModel,
} from './a2ui-messages';
import {
  A2UI_BASIC_CATALOG_ID,
  A2UI_EXTENSION_URIS,
  a2uiAgentExtensions,
  type A2uiComponent,
} from './a2ui-protocol';

const schemas = loadA2uiSchemas();

/** A small form using the basic catalog's inputs, data bindings, checks and a server action. */
const FORM: A2uiComponent[] = [
  {
    id: 'root',
    component: 'Column',
    children: ['title', 'amount', 'amount-error', 'currency', 'date', 'submit'],
  },
  { id: 'title', component: 'Text', text: 'New expense', variant: 'h2' },
  {
    id: 'amount',
    component: 'TextField',
    label: 'Amount',
    value: { path: '/expense/amount' },
    variant: 'number',
    checks: [
      {
        condition: { call: 'required', args: { value: { path: '/expense/amount' } } },
        message: 'Required',
      },
    ],
  },
  { id: 'amount-error', component: 'Text', text: { path: '/errors/amount' }, variant: 'caption' },
  {
    id: 'currency',
    component: 'ChoicePicker',
    label: 'Currency',
    variant: 'mutuallyExclusive',
    options: [
      { label: 'Euro', value: 'EUR' },
      { label: 'US dollar', value: 'USD' },
    ],
    value: { path: '/expense/currency' },
  },
  {
    id: 'date',
    component: 'DateTimeInput',
    label: 'Date',
    value: { path: '/expense/date' },
    enableDate: true,
  },
  {
    id: 'submit',
    component: 'Button',
    child: 'submit-label',
    variant: 'primary',
    action: { event: { name: 'submit', context: { amount: { path: '/expense/amount' } } } },
  },
  { id: 'submit-label', component: 'Text', text: 'Submit' },
];

const user = (parts: Message['parts'], extra: Partial<Message> = {}): Message => ({
  messageId: 'u',
  role: 'ROLE_USER',
  parts,
  ...extra,
});

describe('A2UI messages', () => {
  it('each builder makes a message valid against server_to_client.json', () => {
    const messages = [
      createSurface('s1'),
      createSurface('s2', {
        catalogId: 'https://example.com/catalog',
        theme: { primaryColor: '#112233' },
        sendDataModel: true,
      }),
      updateComponents('s1', FORM),
      updateDataModel('s1', {
        value: { expense: { amount: '12.50', currency: ['EUR'] }, errors: {} },
      }),
      updateDataModel('s1', { path: '/errors/amount', value: 'must be positive' }),
      updateDataModel('s1', { path: '/errors/amount' }),
      deleteSurface('s1'),
    ];
    for (const message of messages) {
      expect(schemas.errors('server_to_client', message), JSON.stringify(message)).toEqual([]);
    }
  });

  it('the schemas refuse what the catalog does not allow (the check can fail)', () => {
    const wrong = updateComponents('s1', [{ id: 'root', component: 'Text', txet: 'typo' }]);
    expect(schemas.errors('server_to_client', wrong)).not.toEqual([]);
    expect(
      schemas.errors('server_to_client', { ...createSurface('s1'), version: 'v0.8' }),
    ).not.toEqual([]);
  });

  it('createSurface names the v0.9 basic catalog by default, as the schemas define its catalogId', () => {
    const dir = join(repoRoot(), 'node_modules/@a2ui/web_core/src/v0_9/schemas/catalogs/basic');
    const catalog = JSON.parse(readFileSync(join(dir, 'catalog.json'), 'utf8')) as {
      catalogId: string;
    };
    expect(A2UI_BASIC_CATALOG_ID).toBe(catalog.catalogId);
    expect(createSurface('s').createSurface.catalogId).toBe(catalog.catalogId);
  });

  it('a2uiPart carries the list of messages with the media type of the version', () => {
    const messages = [createSurface('s'), updateComponents('s', FORM)];
    const v09 = a2uiPart('v0.9', messages);
    const v091 = a2uiPart('v0.9.1', messages);
    expect(v09).toEqual({ data: messages, mediaType: 'application/json+a2ui' });
    expect(v091).toEqual({ data: messages, mediaType: 'application/a2ui+json' });
    expect(schemas.errors('server_to_client_list', v09.data)).toEqual([]);
    expect(isA2uiPart(v09) && isA2uiPart(v091)).toBe(true);
    expect(isA2uiPart({ data: {}, mediaType: 'application/json' })).toBe(false);
    expect(isA2uiPart({ data: {}, metadata: { mimeType: 'application/json+a2ui' } })).toBe(true);
  });

  it('a2uiAgentMessage puts the text first, then the A2UI part, and names the extension', () => {
    const message = a2uiAgentMessage(
      { taskId: 't', contextId: 'c' },
      'v0.9.1',
      'Fill in the form',
      [deleteSurface('s')],
      () => 'm1',
    );
    expect(message).toEqual({
      messageId: 'm1',
      taskId: 't',
      contextId: 'c',
      role: 'ROLE_AGENT',
      parts: [
        { text: 'Fill in the form' },
        { data: [deleteSurface('s')], mediaType: 'application/a2ui+json' },
      ],
      extensions: ['https://a2ui.org/a2a-extension/a2ui/v0.9.1'],
    });
  });
});

describe('A2UI card extensions', () => {
  it('declares both versions, not required, with params valid against server_capabilities.json', () => {
    const extensions = a2uiAgentExtensions();
    expect(extensions.map((e) => [e.uri, e.required])).toEqual([
      ['https://a2ui.org/a2a-extension/a2ui/v0.9', false],
      ['https://a2ui.org/a2a-extension/a2ui/v0.9.1', false],
    ]);
    for (const extension of extensions) {
      expect(extension.params).toEqual({ supportedCatalogIds: [A2UI_BASIC_CATALOG_ID] });
      expect(schemas.errors('server_capabilities', { 'v0.9': extension.params })).toEqual([]);
    }
    const custom = a2uiAgentExtensions({
      supportedCatalogIds: ['https://example.com/c'],
      acceptsInlineCatalogs: true,
    });
    expect(custom[0]?.params).toEqual({
      supportedCatalogIds: ['https://example.com/c'],
      acceptsInlineCatalogs: true,
    });
    expect(schemas.errors('server_capabilities', { 'v0.9': custom[0]?.params })).toEqual([]);
  });
});

describe('reading what the client sent', () => {
  const action = {
    version: 'v0.9',
    action: {
      name: 'submit',
      surfaceId: 'expense-t1',
      sourceComponentId: 'submit',
      timestamp: '2026-12-03T10:00:00Z',
      context: { amount: '12.50', currency: ['EUR'] },
    },
  };

  it('reads a v0.9 action list (valid against client_to_server_list.json)', () => {
    expect(schemas.errors('client_to_server_list', [action])).toEqual([]);
    const message = user([
      { text: 'submit' },
      { data: [action], mediaType: 'application/json+a2ui' },
    ]);
    expect(readA2uiActions(message)).toEqual([{ ...action.action, shape: 'action' }]);
    const v091 = user([{ data: [action], mediaType: 'application/a2ui+json' }]);
    expect(readA2uiActions(v091)).toHaveLength(1);
  });

  it('reads the v0.8 userAction shape, a single message and a 0.3-style metadata.mimeType', () => {
    const message = user([
      {
        data: {
          userAction: {
            name: 'submit',
            surfaceId: 's',
            sourceComponentId: 'b',
            timestamp: 'x',
            context: { a: 1 },
          },
        },
        metadata: { mimeType: 'application/json+a2ui' },
      },
    ]);
    expect(readA2uiActions(message)).toEqual([
      {
        name: 'submit',
        surfaceId: 's',
        sourceComponentId: 'b',
        timestamp: 'x',
        context: { a: 1 },
        shape: 'userAction',
      },
    ]);
  });

  it('skips client errors, malformed actions and data parts of other media types', () => {
    const error = { version: 'v0.9', error: { code: 'RENDER', surfaceId: 's', message: 'boom' } };
    expect(schemas.errors('client_to_server', error)).toEqual([]);
    const message = user([
      {
        data: [error, { version: 'v0.9', action: { surfaceId: 's' } }],
        mediaType: 'application/json+a2ui',
      },
      { data: [action], mediaType: 'application/json' },
      { text: 'hello' },
    ]);
    expect(readA2uiActions(message)).toEqual([]);
  });

  it('reads metadata.a2uiClientCapabilities of either version (valid against client_capabilities.json)', () => {
    const capabilities = { 'v0.9': { supportedCatalogIds: [A2UI_BASIC_CATALOG_ID] } };
    expect(schemas.errors('client_capabilities', capabilities)).toEqual([]);
    expect(
      readA2uiClientCapabilities(
        user([{ text: 'x' }], { metadata: { a2uiClientCapabilities: capabilities } }),
      ),
    ).toEqual({
      version: 'v0.9',
      supportedCatalogIds: [A2UI_BASIC_CATALOG_ID],
      inlineCatalogs: [],
    });
    const v091 = { 'v0.9.1': { supportedCatalogIds: ['a'], inlineCatalogs: [{ catalogId: 'b' }] } };
    expect(
      readA2uiClientCapabilities(
        user([{ text: 'x' }], { metadata: { a2uiClientCapabilities: v091 } }),
      ),
    ).toEqual({
      version: 'v0.9.1',
      supportedCatalogIds: ['a'],
      inlineCatalogs: [{ catalogId: 'b' }],
    });
    expect(readA2uiClientCapabilities(user([{ text: 'x' }]))).toBeNull();
    expect(
      readA2uiClientCapabilities(
        user([{ text: 'x' }], { metadata: { a2uiClientCapabilities: 'v0.9' } }),
      ),
    ).toBeNull();
  });

  it('knows which version the request activated from the message extensions (v0.9.1 first)', () => {
    expect(activatedA2uiVersion(user([{ text: 'x' }]))).toBeNull();
    expect(
      activatedA2uiVersion(user([{ text: 'x' }], { extensions: [A2UI_EXTENSION_URIS['v0.9']] })),
    ).toBe('v0.9');
    expect(
      activatedA2uiVersion(
        user([{ text: 'x' }], { extensions: Object.values(A2UI_EXTENSION_URIS) }),
      ),
    ).toBe('v0.9.1');
    expect(
      activatedA2uiVersion(
        user([{ text: 'x' }], { extensions: ['https://a2ui.org/a2a-extension/a2ui/v0.8'] }),
      ),
    ).toBeNull();
  });
});
