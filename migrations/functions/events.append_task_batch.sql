-- events.append_task_batch: its current definition (docs/adr/0014-function-files.md). Change it here, and name
-- the file's new SHA-256 in a new migration.
--
-- Group commit of task streams (docs/adr/0007-hot-path-group-commit.md): one call appends the changes of many
-- task streams, each under its own expected version, with everything written inline (message-id claims,
-- events, the task view, the work queue, notices, audit records), in one statement and so in one transaction
-- and one commit. Streams are independent: one whose guard fails (it moved on) or whose message was already
-- claimed is left out, reported, and the others are written. The caller re-reads and decides again for the
-- conflicts.
--
-- `batch` is a JSON document (`TaskBatch` in apps/task-service/src/write/task-batch.ts) of one list per kind
-- of row. Each row names its stream by `stream_index`, the stream's index in `streams`, and its other keys are
-- the columns it fills:
--   channel   the NOTIFY channel
--   streams   [{stream_index, tenant_id, stream_id, expected_version (0: a new stream), version (after)}]
--   claims    [{stream_index, tenant_id, agent_id, principal_id, message_id, task_id, message_digest}]
--   events    [{stream_index, tenant_id, stream_id, event_id, stream_version, event_type, schema_version,
--               data, metadata}]
--   views     [{stream_index, tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp,
--               version, task}]
--   work      [{stream_index, tenant_id, task_id, agent_id, status: 'queued' | 'leased' | 'idle', attempt,
--               lease_epoch, worker_id, lease_expires_at, cancel_deadline}]
--   notices   [{stream_index, payload}]
--   audit     [{stream_index, tenant_id, record_id, occurred_at, principal_id, credential_id, source_address,
--               operation, binding, resource, outcome, reason, trace_id, digest (hex)}]
-- Returns one row per stream NOT written, 'duplicate' (its message was already claimed) or 'conflict', and
-- one per stream written with a claim whose messageId was held for another message, 'reused'.

-- A batch of the release before readable keys (one-letter keys: `i`, `t`, `s`, …), as its replicas send it
-- during a rollout, with the keys of this one. ADR 0007: a change of the batch's format takes the previous
-- release's batches; the next change replaces this with its own.
CREATE OR REPLACE FUNCTION events.task_batch_from_short_keys(batch jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE
  AS $$
  SELECT batch || jsonb_object_agg(l.list, (
           SELECT coalesce(jsonb_agg((SELECT jsonb_object_agg(coalesce(l.renames ->> f.key, f.key), f.value)
                                        FROM jsonb_each(r.x) AS f (key, value)) ORDER BY r.o), '[]')
             FROM jsonb_array_elements(batch -> l.list) WITH ORDINALITY AS r (x, o)))
    FROM (VALUES
      ('streams', '{"i": "stream_index", "t": "tenant_id", "s": "stream_id", "e": "expected_version",
                    "n": "version"}'::jsonb),
      ('claims', '{"i": "stream_index", "t": "tenant_id", "a": "agent_id", "p": "principal_id",
                   "m": "message_id", "k": "task_id", "d": "message_digest"}'),
      ('events', '{"i": "stream_index", "t": "tenant_id", "s": "stream_id", "id": "event_id",
                   "v": "stream_version", "y": "event_type", "sv": "schema_version", "d": "data",
                   "m": "metadata"}'),
      ('views', '{"i": "stream_index", "t": "tenant_id"}'),
      ('work', '{"i": "stream_index", "t": "tenant_id"}'),
      ('notices', '{"i": "stream_index", "n": "payload"}'),
      ('audit', '{"i": "stream_index", "t": "tenant_id", "id": "record_id", "at": "occurred_at",
                  "p": "principal_id", "c": "credential_id", "s": "source_address", "o": "operation",
                  "b": "binding", "r": "resource", "out": "outcome", "re": "reason", "tr": "trace_id",
                  "d": "digest"}')
    ) AS l (list, renames)
$$;

CREATE OR REPLACE FUNCTION events.append_task_batch(batch jsonb)
  RETURNS TABLE (stream_index integer, outcome text)
  LANGUAGE plpgsql
  -- Only nested loops over index lookups: the batch touches nothing but its own rows, by key. One plan per
  -- statement and session: every batch has the same shape, and the custom plans the plan cache chose were
  -- made again on every call.
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
  SET plan_cache_mode = force_generic_plan
  AS $$
DECLARE
  duplicate integer[];
  reused integer[];
  written integer[];
BEGIN
  -- (`stream_index` and `outcome` are also the names of the result's columns, so they are always qualified.)

  -- 0. A replica of the previous release (a rollout in progress) sends one-letter keys.
  IF (batch -> 'streams' -> 0) ? 'i' THEN
    batch := events.task_batch_from_short_keys(batch);
  END IF;

  -- 1. SendMessage idempotency: the same message (messageId and digest) another transaction holds (committed
  --    or not: we wait) is a repeat. The messageId held for another message only is noted (`reused`).
  --    (Statements with nothing to do are skipped: each one costs a parse of its list and a plan.)
  duplicate := '{}';
  reused := '{}';
  IF jsonb_array_length(batch -> 'claims') > 0 THEN
  WITH c AS (
    SELECT * FROM jsonb_to_recordset(batch -> 'claims')
      AS x(stream_index integer, tenant_id text, agent_id text, principal_id text, message_id text,
           task_id text, message_digest text)
  ), claimed AS (
    INSERT INTO ops.message_ids (tenant_id, agent_id, principal_id, message_id, task_id, message_digest)
    SELECT c.tenant_id, c.agent_id, c.principal_id, c.message_id, c.task_id, c.message_digest
      FROM c ORDER BY c.tenant_id, c.agent_id, c.principal_id, c.message_id
    ON CONFLICT DO NOTHING
    RETURNING tenant_id, agent_id, principal_id, message_id, message_digest
  )
  SELECT coalesce(array_agg(c.stream_index) FILTER (WHERE NOT EXISTS (
           SELECT 1 FROM claimed
            WHERE (claimed.tenant_id, claimed.agent_id, claimed.principal_id, claimed.message_id,
                   claimed.message_digest)
                = (c.tenant_id, c.agent_id, c.principal_id, c.message_id, c.message_digest))), '{}'),
         coalesce(array_agg(c.stream_index) FILTER (WHERE EXISTS (
           SELECT 1 FROM ops.message_ids mi
            WHERE (mi.tenant_id, mi.agent_id, mi.principal_id, mi.message_id)
                = (c.tenant_id, c.agent_id, c.principal_id, c.message_id)
              AND mi.message_digest <> c.message_digest)), '{}')
    INTO duplicate, reused FROM c;
  END IF;

  -- 2. The per-stream guards. Existing streams are locked first, in one order for every writer: two batches
  --    (two replicas granting the same queued task, say) then wait for each other instead of deadlocking,
  --    and the later one finds the stream moved on (a conflict, decided again on a fresh read).
  PERFORM 1
     FROM events.streams st
     JOIN jsonb_to_recordset(batch -> 'streams')
       AS x(stream_index integer, tenant_id text, stream_id text, expected_version integer)
       ON st.tenant_id = x.tenant_id AND st.stream_id = x.stream_id
    WHERE x.expected_version > 0 AND NOT (x.stream_index = ANY (duplicate))
    ORDER BY st.tenant_id, st.stream_id
      FOR UPDATE OF st;

  -- The guards. A transaction older than the one that wrote a stream's last event must not
  --    append after it (the relay publishes in transaction-id order): that counts as a conflict too.
  WITH s AS (
    SELECT * FROM jsonb_to_recordset(batch -> 'streams')
      AS x(stream_index integer, tenant_id text, stream_id text, expected_version integer, version integer)
     WHERE NOT (x.stream_index = ANY (duplicate))
  ), created AS (
    INSERT INTO events.streams (tenant_id, stream_id, version)
    SELECT s.tenant_id, s.stream_id, s.version FROM s
     WHERE s.expected_version = 0 ORDER BY s.tenant_id, s.stream_id
    ON CONFLICT DO NOTHING
    RETURNING tenant_id, stream_id
  ), moved AS (
    UPDATE events.streams st SET version = s.version
      FROM s
     WHERE s.expected_version > 0 AND st.tenant_id = s.tenant_id AND st.stream_id = s.stream_id
       AND st.version = s.expected_version
       AND NOT EXISTS (
         SELECT 1 FROM events.messages m
          WHERE m.tenant_id = s.tenant_id AND m.stream_id = s.stream_id
            AND m.stream_version = s.expected_version AND m.transaction_id > pg_current_xact_id())
    RETURNING st.tenant_id, st.stream_id
  )
  SELECT coalesce(array_agg(s.stream_index), '{}') INTO written FROM s
   WHERE EXISTS (SELECT 1 FROM created
                  WHERE (created.tenant_id, created.stream_id) = (s.tenant_id, s.stream_id))
      OR EXISTS (SELECT 1 FROM moved WHERE (moved.tenant_id, moved.stream_id) = (s.tenant_id, s.stream_id));

  -- 3. A messageId claimed for a stream that conflicted is given back (the retry claims it again).
  IF cardinality(written) + cardinality(duplicate) < jsonb_array_length(batch -> 'streams')
     AND jsonb_array_length(batch -> 'claims') > 0 THEN
    DELETE FROM ops.message_ids mi
     USING jsonb_to_recordset(batch -> 'claims')
       AS c(stream_index integer, tenant_id text, agent_id text, principal_id text, message_id text,
            message_digest text)
     WHERE NOT (c.stream_index = ANY (written)) AND NOT (c.stream_index = ANY (duplicate))
       AND (mi.tenant_id, mi.agent_id, mi.principal_id, mi.message_id, mi.message_digest)
         = (c.tenant_id, c.agent_id, c.principal_id, c.message_id, c.message_digest);
  END IF;

  -- 4. The events, in stream order within each stream. (Each row of steps 4–6 names its stream: joined to the
  --    stream list instead, with the nested loops the settings above leave, a batch of n streams compared
  --    every row with all n of them.)
  INSERT INTO events.messages
    (event_id, tenant_id, stream_id, stream_version, event_type, schema_version, data, metadata)
  SELECT ev.event_id, ev.tenant_id, ev.stream_id, ev.stream_version, ev.event_type, ev.schema_version, ev.data,
         ev.metadata
    FROM jsonb_to_recordset(batch -> 'events')
      AS ev(stream_index integer, tenant_id text, stream_id text, event_id uuid, stream_version integer,
            event_type text, schema_version smallint, data jsonb, metadata jsonb)
   WHERE ev.stream_index = ANY (written)
   ORDER BY ev.stream_index, ev.stream_version;

  -- 5. The task view (a row only ever moves forward).
  INSERT INTO read.task_view
    (tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task)
  SELECT v.tenant_id, v.task_id, v.agent_id, v.owner_id, v.context_id, v.state, v.status_timestamp, v.version,
         v.task
    FROM jsonb_to_recordset(batch -> 'views')
      AS v(stream_index integer, tenant_id text, task_id text, agent_id text, owner_id text, context_id text,
           state text, status_timestamp timestamptz, version integer, task jsonb)
   WHERE v.stream_index = ANY (written)
   ORDER BY v.tenant_id, v.task_id
  ON CONFLICT (tenant_id, task_id) DO UPDATE SET
    state = EXCLUDED.state, status_timestamp = EXCLUDED.status_timestamp,
    version = EXCLUDED.version, task = EXCLUDED.task
   WHERE task_view.version < EXCLUDED.version;

  -- 6. The work queue: a row while the task is queued or leased, none otherwise. Heartbeats extend
  --    lease_expires_at outside the log, so an unchanged epoch keeps the renewed expiry.
  IF jsonb_path_exists(batch, '$.work[*] ? (@.status == "idle")') THEN
    -- The ended tasks' rows by their whole key. (Joined to the list directly, the row was looked for with the
    -- tenant as the only index condition: among all of its tenant's queued and leased rows.)
    WITH ended AS MATERIALIZED (
      SELECT w.tenant_id, w.task_id
        FROM jsonb_to_recordset(batch -> 'work')
          AS w(stream_index integer, tenant_id text, task_id text, status text)
       WHERE w.stream_index = ANY (written) AND w.status = 'idle'
    )
    DELETE FROM ops.task_work tw USING ended
     WHERE tw.tenant_id = ended.tenant_id AND tw.task_id = ended.task_id;
  END IF;
  IF jsonb_path_exists(batch, '$.work[*] ? (@.status != "idle")') THEN
  INSERT INTO ops.task_work
    (tenant_id, task_id, agent_id, status, queued_at, attempt, lease_epoch, worker_id, lease_expires_at,
     cancel_deadline)
  SELECT w.tenant_id, w.task_id, w.agent_id, w.status, clock_timestamp(), w.attempt, w.lease_epoch,
         w.worker_id, w.lease_expires_at, w.cancel_deadline
    FROM jsonb_to_recordset(batch -> 'work')
      AS w(stream_index integer, tenant_id text, task_id text, agent_id text, status text, attempt integer,
           lease_epoch bigint, worker_id text, lease_expires_at timestamptz, cancel_deadline timestamptz)
   WHERE w.stream_index = ANY (written) AND w.status <> 'idle'
   ORDER BY w.tenant_id, w.task_id
  ON CONFLICT (tenant_id, task_id) DO UPDATE SET
    status = EXCLUDED.status,
    queued_at = CASE WHEN task_work.status = 'queued' AND EXCLUDED.status = 'queued'
                     THEN task_work.queued_at ELSE EXCLUDED.queued_at END,
    attempt = EXCLUDED.attempt,
    lease_epoch = EXCLUDED.lease_epoch,
    worker_id = EXCLUDED.worker_id,
    lease_expires_at = CASE WHEN task_work.lease_epoch IS NOT DISTINCT FROM EXCLUDED.lease_epoch
                            THEN task_work.lease_expires_at ELSE EXCLUDED.lease_expires_at END,
    cancel_deadline = EXCLUDED.cancel_deadline;
  END IF;

  -- 7. Notices, sent at commit.
  PERFORM pg_notify(batch ->> 'channel', n.payload)
     FROM jsonb_to_recordset(batch -> 'notices') AS n(stream_index integer, payload text)
    WHERE n.stream_index = ANY (written);

  -- The audit records of the calls whose changes were written, in this transaction: a change and the record
  -- of the call that made it commit together or not at all. Chained last, so the tenant's chain head is
  -- locked only for the rest of the transaction.
  IF jsonb_array_length(batch -> 'audit') = 1 THEN
    -- A lone record (every batch at low load): its columns as they are, no arrays to build.
    PERFORM audit.chain_record(a.tenant_id, a.record_id, a.occurred_at, a.principal_id, a.credential_id,
                               a.source_address, a.operation, a.binding, a.resource, a.outcome, a.reason,
                               a.trace_id, decode(a.digest, 'hex'))
       FROM jsonb_to_record(batch -> 'audit' -> 0)
         AS a(stream_index integer, tenant_id text, record_id uuid, occurred_at timestamptz, principal_id text,
              credential_id text, source_address text, operation text, binding text, resource text,
              outcome text, reason text, trace_id text, digest text)
      WHERE a.stream_index = ANY (written);
  ELSIF jsonb_array_length(batch -> 'audit') > 1 THEN
    PERFORM audit.chain_records(x.tenant_ids, x.record_ids, x.occurred, x.principals, x.credentials, x.sources,
                                x.operations, x.bindings, x.resources, x.outcomes, x.reasons, x.traces,
                                x.digests)
       FROM (SELECT array_agg(a.tenant_id ORDER BY a.stream_index) AS tenant_ids,
                    array_agg(a.record_id ORDER BY a.stream_index) AS record_ids,
                    array_agg(a.occurred_at ORDER BY a.stream_index) AS occurred,
                    array_agg(a.principal_id ORDER BY a.stream_index) AS principals,
                    array_agg(a.credential_id ORDER BY a.stream_index) AS credentials,
                    array_agg(a.source_address ORDER BY a.stream_index) AS sources,
                    array_agg(a.operation ORDER BY a.stream_index) AS operations,
                    array_agg(a.binding ORDER BY a.stream_index) AS bindings,
                    array_agg(a.resource ORDER BY a.stream_index) AS resources,
                    array_agg(a.outcome ORDER BY a.stream_index) AS outcomes,
                    array_agg(a.reason ORDER BY a.stream_index) AS reasons,
                    array_agg(a.trace_id ORDER BY a.stream_index) AS traces,
                    array_agg(decode(a.digest, 'hex') ORDER BY a.stream_index) AS digests
               FROM jsonb_to_recordset(batch -> 'audit')
                 AS a(stream_index integer, tenant_id text, record_id uuid, occurred_at timestamptz,
                      principal_id text, credential_id text, source_address text, operation text, binding text,
                      resource text, outcome text, reason text, trace_id text, digest text)
              WHERE a.stream_index = ANY (written)) AS x
      WHERE x.tenant_ids IS NOT NULL;
  END IF;

  IF cardinality(written) = jsonb_array_length(batch -> 'streams') AND cardinality(reused) = 0 THEN
    RETURN;
  END IF;
  RETURN QUERY
    SELECT s.stream_index, CASE WHEN s.stream_index = ANY (written) THEN 'reused'
                                WHEN s.stream_index = ANY (duplicate) THEN 'duplicate' ELSE 'conflict' END
      FROM jsonb_to_recordset(batch -> 'streams') AS s(stream_index integer)
     WHERE NOT (s.stream_index = ANY (written)) OR s.stream_index = ANY (reused);
END;
$$;
