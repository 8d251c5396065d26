import { decodeListPageToken, type ListTasksRequest } from '@lib/a2a-protocol';
import { readsAllTasks } from '@lib/authz';
import type { CallContext } from '../call-context';

/** ListTasks page size when the request has none (spec digest §10.7). */
export const DEFAULT_PAGE_SIZE = 50;

/** One SQL statement with its parameters, as `pg` takes it. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** A row of {@link listTasksStatement}: the total on every row, and one task per row (none when the page is empty). */
export interface ListTasksRow {
  total: string;
  task: unknown;
  status_timestamp: Date | null;
  task_id: string | null;
}

/**
 * ListTasks as one statement (one round trip, one snapshot for the page and its totalSize), scoped to the
 * caller's tenant, agent and ownership (every principal's tasks with `a2a:tasks:read-all`; such a listing sorts
 * the agent's rows, as no index serves it):
 *
 * - the page is one keyset range of the index that matches the filters (`read.task_view_listing*`), newest
 *   status first, ties broken by task id; a page token is the last row's (status_timestamp, task_id), so a deep
 *   page costs what the first one does;
 * - totalSize comes from `read.task_counts` (a sum over a few rows) unless `contextId` or
 *   `statusTimestampAfter` narrows the listing; then it is counted from the narrowest index, index only.
 *
 * Reads `pageSize + 1` rows: the extra one says whether there is a next page. Throws `INVALID_PARAMS` on a page
 * token this server did not issue.
 */
export function listTasksStatement(ctx: CallContext, request: ListTasksRequest): Statement {
  const values: unknown[] = [ctx.tenantId, ctx.agentId];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  // Every principal's tasks with the tenant-wide read scope, the caller's own otherwise.
  const scope = ['tenant_id = $1', 'agent_id = $2'];
  if (!readsAllTasks(ctx)) {
    scope.push(`owner_id = ${param(ctx.principalId)}`);
  }
  const filters = [...scope];
  const state =
    request.status && request.status !== 'TASK_STATE_UNSPECIFIED' ? param(request.status) : null;
  if (state) {
    filters.push(`state = ${state}`);
  }
  if (request.contextId) {
    filters.push(`context_id = ${param(request.contextId)}`);
  }
  if (request.statusTimestampAfter) {
    filters.push(`status_timestamp >= ${param(request.statusTimestampAfter)}::timestamptz`);
  }
  const where = filters.join(' AND ');
  const total =
    request.contextId || request.statusTimestampAfter
      ? `SELECT count(*) AS total FROM read.task_view WHERE ${where}`
      : `SELECT coalesce(sum(tasks), 0) AS total FROM read.task_counts
          WHERE ${scope.join(' AND ')}${state ? ` AND state = ${state}` : ''}`;
  let range = where;
  if (request.pageToken) {
    const cursor = decodeListPageToken(request.pageToken);
    range += ` AND (status_timestamp, task_id) < (${param(cursor.statusTimestamp)}::timestamptz, ${param(cursor.taskId)})`;
  }
  const limit = param((request.pageSize ?? DEFAULT_PAGE_SIZE) + 1);
  return {
    text: `SELECT counted.total, page.task, page.status_timestamp, page.task_id
  FROM (${total}) AS counted
  LEFT JOIN LATERAL (
    SELECT task, status_timestamp, task_id FROM read.task_view WHERE ${range}
     ORDER BY status_timestamp DESC, task_id DESC LIMIT ${limit}) AS page ON true
 ORDER BY page.status_timestamp DESC, page.task_id DESC`,
    values,
  };
}
