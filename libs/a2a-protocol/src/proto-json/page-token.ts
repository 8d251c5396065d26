/**
 * Page tokens of ListTasks (digest §10.7) and ListTaskPushNotificationConfigs (§4.4): opaque to clients,
 * base64url of a small versioned JSON cursor.
 */
import { invalidParams } from '../errors';
import { isPlainObject, normalizeTimestamp } from './scalars';

export interface ListPageCursor {
  /** Status timestamp of the last task on the previous page (normalised RFC 3339). */
  statusTimestamp: string;
  /** Id of that task; breaks ties between equal timestamps. */
  taskId: string;
}

const PAGE_TOKEN_VERSION = 1;

export function encodeListPageToken(cursor: ListPageCursor): string {
  const payload = { v: PAGE_TOKEN_VERSION, ts: cursor.statusTimestamp, id: cursor.taskId };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/** Throws `INVALID_PARAMS` on field `pageToken` when the token was not issued by {@link encodeListPageToken}. */
export function decodeListPageToken(token: string): ListPageCursor {
  const cursor = readListPageToken(token);
  if (cursor === undefined) {
    throw invalidParams([
      { field: 'pageToken', description: 'is not a page token issued by this server' },
    ]);
  }
  return cursor;
}

/** Whether `token` is a page token this server issued (well-formed; its cursor is not checked further). */
export function isListPageToken(token: string): boolean {
  return readListPageToken(token) !== undefined;
}

function readListPageToken(token: string): ListPageCursor | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) {
    return undefined;
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (
    !isPlainObject(payload) ||
    payload['v'] !== PAGE_TOKEN_VERSION ||
    typeof payload['ts'] !== 'string' ||
    normalizeTimestamp(payload['ts']) !== payload['ts'] ||
    typeof payload['id'] !== 'string' ||
    payload['id'] === ''
  ) {
    return undefined;
  }
  return { statusTimestamp: payload['ts'], taskId: payload['id'] };
}

/** The page token of ListTaskPushNotificationConfigs after the config `configId` (configs page by id). */
export function encodeConfigPageToken(configId: string): string {
  return Buffer.from(JSON.stringify({ v: PAGE_TOKEN_VERSION, c: configId }), 'utf8').toString(
    'base64url',
  );
}

/** The config id a page token of {@link encodeConfigPageToken} continues after; else `INVALID_PARAMS`. */
export function decodeConfigPageToken(token: string): string {
  let payload: unknown;
  try {
    payload = /^[A-Za-z0-9_-]+$/.test(token)
      ? JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))
      : undefined;
  } catch {
    payload = undefined;
  }
  if (
    !isPlainObject(payload) ||
    payload['v'] !== PAGE_TOKEN_VERSION ||
    typeof payload['c'] !== 'string' ||
    payload['c'] === ''
  ) {
    throw invalidParams([
      { field: 'pageToken', description: 'is not a page token issued by this server' },
    ]);
  }
  return payload['c'];
}
