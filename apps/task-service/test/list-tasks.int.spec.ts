import { encodeListPageToken, type ListTasksRequest, type TaskStateName } from '@lib/a2a-protocol';
import { callContext, createTestDatabase, type TestDatabase } from '@lib/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallContext } from '../src/call-context';
import { listTasksStatement } from '../src/queries/list-tasks.sql';
import { TaskViews } from '../src/queries/task-views';

/** ListTasks (spec §3.1.4, digest §10.7) on read.task_view and read.task_counts, against real Postgres. */

const ALICE = { tenantId: 'acme', agentId: 'echo', principalId: 'alice' };
const alice: CallContext = callContext(ALICE);
const STATES: TaskStateName[] = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_INPUT_REQUIRED',
];

interface Seeded {
  id: string;
  contextId: string;
  state: TaskStateName;
  timestamp: string;
}

async function insertTasks(db: TestDatabase, ctx: CallContext, tasks: Seeded[]): Promise<void> {
  await db.pool.query(
    `INSERT INTO read.task_view
       (tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task)
     SELECT $1, t.id, $2, $3, t."contextId", t.state, t.timestamp::timestamptz, 1,
            jsonb_build_object('id', t.id, 'contextId', t."contextId",
              'status', jsonb_build_object('state', t.state, 'timestamp', t.timestamp),
              'history', jsonb_build_array(jsonb_build_object('messageId', 'm-' || t.id, 'role', 'ROLE_USER',
                'parts', jsonb_build_array(jsonb_build_object('text', 'hello')))),
              'artifacts', jsonb_build_array(jsonb_build_object('artifactId', 'a1',
                'parts', jsonb_build_array(jsonb_build_object('text', 'out')))))
       FROM jsonb_to_recordset($4::jsonb) AS t(id text, "contextId" text, state text, timestamp text)`,
    [ctx.tenantId, ctx.agentId, ctx.principalId, JSON.stringify(tasks)],
  );
}

/** Every page of one listing, following nextPageToken. */
async function allPages(
  views: TaskViews,
  ctx: CallContext,
  request: ListTasksRequest,
): Promise<{ ids: string[]; totals: number[]; pages: number }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let pageToken = '';
  let pages = 0;
  do {
    const page = await views.list(ctx, { ...request, ...(pageToken ? { pageToken } : {}) });
    ids.push(...page.tasks.map((t) => t.id));
    totals.push(page.totalSize);
    expect(page.pageSize).toBe(request.pageSize ?? 50);
    expect(page.tasks.length).toBeLessThanOrEqual(page.pageSize);
    pageToken = page.nextPageToken;
    pages++;
  } while (pageToken !== '' && pages < 1_000);
  return { ids, totals, pages };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe('ListTasks on the task view', () => {
  let db: TestDatabase;
  let views: TaskViews;
  const mine: Seeded[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('list_tasks');
    views = new TaskViews(db.pool);
    // 240 tasks on 12 distinct timestamps: many ties, which only the task id orders.
    for (let i = 0; i < 240; i++) {
      mine.push({
        id: `task-${String((i * 7919) % 1000).padStart(4, '0')}-${String(i).padStart(3, '0')}`,
        contextId: `ctx-${i % 5}`,
        state: STATES[(i * 3) % STATES.length] ?? 'TASK_STATE_WORKING',
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 12)).toISOString(),
      });
    }
    await insertTasks(db, alice, mine);
    // Same ids and contexts under another tenant, agent and owner: never listed for alice.
    await insertTasks(db, callContext({ ...ALICE, tenantId: 'evil' }), mine.slice(0, 30));
    await insertTasks(
      db,
      callContext({ ...ALICE, agentId: 'other' }),
      mine.slice(0, 30).map((t) => ({ ...t, id: `other-${t.id}` })),
    );
    await insertTasks(
      db,
      callContext({ ...ALICE, principalId: 'bob' }),
      mine.slice(0, 30).map((t) => ({ ...t, id: `bob-${t.id}` })),
    );
  });

  afterAll(async () => {
    await db.drop();
  });

  const filters: { name: string; request: ListTasksRequest; keep: (t: Seeded) => boolean }[] = [
    { name: 'no filter', request: {}, keep: () => true },
    {
      name: 'status',
      request: { status: 'TASK_STATE_WORKING' },
      keep: (t) => t.state === 'TASK_STATE_WORKING',
    },
    {
      name: 'status UNSPECIFIED (no filter)',
      request: { status: 'TASK_STATE_UNSPECIFIED' },
      keep: () => true,
    },
    { name: 'contextId', request: { contextId: 'ctx-3' }, keep: (t) => t.contextId === 'ctx-3' },
    {
      name: 'contextId and status',
      request: { contextId: 'ctx-1', status: 'TASK_STATE_COMPLETED' },
      keep: (t) => t.contextId === 'ctx-1' && t.state === 'TASK_STATE_COMPLETED',
    },
    {
      name: 'statusTimestampAfter',
      request: { statusTimestampAfter: '2026-01-01T00:00:07.000Z' },
      keep: (t) => t.timestamp >= '2026-01-01T00:00:07.000Z',
    },
    {
      name: 'status and statusTimestampAfter',
      request: { status: 'TASK_STATE_SUBMITTED', statusTimestampAfter: '2026-01-01T00:00:03.000Z' },
      keep: (t) => t.state === 'TASK_STATE_SUBMITTED' && t.timestamp >= '2026-01-01T00:00:03.000Z',
    },
  ];

  for (const { name, request, keep } of filters) {
    it(`pages through every matching task once, newest status first, ties by task id; totalSize on every page (${name})`, async () => {
      const expected = mine
        .filter(keep)
        .sort((a, b) =>
          a.timestamp === b.timestamp ? (a.id < b.id ? 1 : -1) : a.timestamp < b.timestamp ? 1 : -1,
        )
        .map((t) => t.id);
      expect(expected.length).toBeGreaterThan(5);
      const listed = await allPages(views, alice, { ...request, pageSize: 7 });
      expect(listed.ids).toEqual(expected);
      expect(new Set(listed.totals)).toEqual(new Set([expected.length]));
      expect(listed.pages).toBe(Math.ceil(expected.length / 7));
    });
  }

  it('pages with the default size of 50 and an empty nextPageToken on the last page', async () => {
    const first = await views.list(alice, {});
    expect(first.tasks).toHaveLength(50);
    expect(first.pageSize).toBe(50);
    expect(first.totalSize).toBe(240);
    expect(first.nextPageToken).not.toBe('');
    const last = await views.list(alice, { pageSize: 100, contextId: 'ctx-0' });
    expect(last.tasks).toHaveLength(48);
    expect(last.nextPageToken).toBe('');
  });

  it('omits artifacts unless includeArtifacts, and trims history to historyLength', async () => {
    const plain = await views.list(alice, { pageSize: 1, historyLength: 0 });
    expect(plain.tasks[0]?.artifacts).toBeUndefined();
    expect(plain.tasks[0]?.history ?? []).toEqual([]);
    const full = await views.list(alice, { pageSize: 1, includeArtifacts: true });
    expect(full.tasks[0]?.artifacts).toHaveLength(1);
    expect(full.tasks[0]?.history).toHaveLength(1);
  });

  it('returns no task and totalSize 0 for an empty page or listing', async () => {
    const none = await views.list(alice, { contextId: 'no-such-context' });
    expect(none).toEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
    const past = await views.list(alice, {
      pageToken: encodeListPageToken({ statusTimestamp: '2000-01-01T00:00:00.000Z', taskId: 'a' }),
    });
    expect(past.tasks).toEqual([]);
    expect(past.totalSize).toBe(240);
  });

  it('shows tenant B, another agent and another caller none of tenant A’s tasks, nor counts them', async () => {
    const stranger = await views.list(callContext({ ...ALICE, tenantId: 'nobody' }), {});
    expect(stranger).toEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
    for (const ctx of [
      callContext({ ...ALICE, tenantId: 'evil' }),
      callContext({ ...ALICE, agentId: 'other' }),
      callContext({ ...ALICE, principalId: 'bob' }),
    ]) {
      const listed = await allPages(views, ctx, { pageSize: 100 });
      expect(listed.ids).toHaveLength(30);
      expect(listed.totals).toEqual([30]);
      const ofAlice = new Set(mine.slice(30).map((t) => t.id));
      expect(listed.ids.filter((id) => ofAlice.has(id))).toEqual([]);
    }
  });

  it('refuses a page token it did not issue (invalid params)', async () => {
    await expect(views.list(alice, { pageToken: 'bm90LWEtdG9rZW4' })).rejects.toMatchObject({
      reason: 'INVALID_PARAMS',
    });
  });

  describe('plans with 200,000 tasks of one caller', () => {
    const big: CallContext = callContext({ ...ALICE, principalId: 'carol' });
    let middle: { ts: string; id: string };

    beforeAll(async () => {
      await db.pool.query(
        `INSERT INTO read.task_view
           (tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task)
         SELECT $1, 'big-' || i, $2, $3, 'ctx-' || (i / 10),
                (ARRAY['TASK_STATE_COMPLETED', 'TASK_STATE_COMPLETED', 'TASK_STATE_COMPLETED',
                       'TASK_STATE_INPUT_REQUIRED'])[i % 4 + 1],
                timestamptz '2026-01-01' + i * interval '1 second', 3,
                jsonb_build_object('id', 'big-' || i, 'contextId', 'ctx-' || (i / 10),
                  'status', jsonb_build_object('state', 'TASK_STATE_COMPLETED'))
           FROM generate_series(1, 200000) AS i`,
        [big.tenantId, big.agentId, big.principalId],
      );
      // Counts of 20,000 other callers, so that the planner sees task_counts as the shared table it is.
      await db.pool.query(
        `INSERT INTO read.task_counts (tenant_id, agent_id, owner_id, state, tasks)
         SELECT 'tenant-' || (i % 100), 'echo', 'user-' || i, 'TASK_STATE_COMPLETED', 1
           FROM generate_series(1, 20000) AS i`,
      );
      await db.pool.query('VACUUM ANALYZE read.task_view');
      await db.pool.query('VACUUM ANALYZE read.task_counts');
      const row = await db.pool.query<{ ts: Date; id: string }>(
        `SELECT status_timestamp AS ts, task_id AS id FROM read.task_view
          WHERE owner_id = 'carol' ORDER BY status_timestamp DESC, task_id DESC OFFSET 100000 LIMIT 1`,
      );
      middle = { ts: row.rows[0]!.ts.toISOString(), id: row.rows[0]!.id };
    }, 120_000);

    async function plan(request: ListTasksRequest): Promise<PlanNode> {
      const { text, values } = listTasksStatement(big, request);
      const result = await db.pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
        values,
      );
      return result.rows[0]!['QUERY PLAN'][0].Plan;
    }

    const deepToken = (): string =>
      encodeListPageToken({ statusTimestamp: middle.ts, taskId: middle.id });

    const shapes: {
      name: string;
      request: () => ListTasksRequest;
      index: string;
      counted: string;
    }[] = [
      {
        name: 'first page',
        request: () => ({}),
        index: 'task_view_listing',
        counted: 'task_counts',
      },
      {
        name: 'deep page by pageToken',
        request: () => ({ pageToken: deepToken() }),
        index: 'task_view_listing',
        counted: 'task_counts',
      },
      {
        name: 'status',
        request: () => ({ status: 'TASK_STATE_INPUT_REQUIRED' }),
        index: 'task_view_listing_state',
        counted: 'task_counts',
      },
      {
        name: 'status, deep page',
        request: () => ({ status: 'TASK_STATE_COMPLETED', pageToken: deepToken() }),
        index: 'task_view_listing_state',
        counted: 'task_counts',
      },
      {
        name: 'contextId',
        request: () => ({ contextId: 'ctx-777' }),
        index: 'task_view_listing_context',
        counted: 'task_view_listing_context',
      },
      {
        name: 'contextId and status',
        request: () => ({ contextId: 'ctx-777', status: 'TASK_STATE_COMPLETED' }),
        index: 'task_view_listing_context',
        counted: 'task_view_listing_context',
      },
    ];

    for (const shape of shapes) {
      it(`reads one keyset range of ${shape.index}, at most pageSize + 1 entries, and totalSize from ${shape.counted} (${shape.name})`, async () => {
        const root = await plan(shape.request());
        const all = nodes(root);
        expect(all.map((n) => n['Node Type'])).not.toContain('Seq Scan');
        expect(all.map((n) => n['Node Type'])).not.toContain('Bitmap Heap Scan');
        const onView = all.filter((n) => n['Relation Name'] === 'task_view');
        const page = onView.find((n) => n['Node Type'] === 'Index Scan');
        expect(page?.['Index Name']).toBe(shape.index);
        expect((page?.['Actual Rows'] ?? 0) * (page?.['Actual Loops'] ?? 0)).toBeLessThanOrEqual(
          51,
        );
        // The state of a contextId + status page is checked on the index entries of that context (INCLUDE).
        expect(page?.['Rows Removed by Filter'] ?? 0).toBeLessThanOrEqual(
          shape.request().contextId ? 10 : 0,
        );
        const count = all.filter((n) => n !== page && n['Relation Name'] !== undefined);
        if (shape.counted === 'task_counts') {
          expect(count.map((n) => n['Relation Name'])).toEqual(['task_counts']);
          expect(count[0]?.['Actual Rows']).toBeLessThan(200);
        } else {
          expect(count.map((n) => [n['Node Type'], n['Index Name']])).toEqual([
            ['Index Only Scan', shape.counted],
          ]);
        }
      });
    }

    it('serves the same pages as counting and sorting everything would', async () => {
      const response = await views.list(big, { pageToken: deepToken(), pageSize: 100 });
      const expected = await db.pool.query<{ task_id: string }>(
        `SELECT task_id FROM read.task_view WHERE owner_id = 'carol'
          ORDER BY status_timestamp DESC, task_id DESC OFFSET 100001 LIMIT 100`,
      );
      expect(response.tasks.map((t) => t.id)).toEqual(expected.rows.map((r) => r.task_id));
      expect(response.totalSize).toBe(200_000);
      const state = await views.list(big, { status: 'TASK_STATE_INPUT_REQUIRED' });
      expect(state.totalSize).toBe(50_000);
    });
  });
});
