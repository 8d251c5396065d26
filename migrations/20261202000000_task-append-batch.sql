-- Up Migration

-- Group commit of task streams (docs/adr/0007-hot-path-group-commit.md): one call appends the changes of many
-- task streams, each under its own expected version, with everything written inline today (message-id
-- claims, events, the task view, the work queue, notices), in one statement and so in one transaction and one
-- commit.
-- Streams are independent: one whose guard fails (it moved on) or whose messageId was already claimed is left
-- out, reported, and the others are written. The caller re-reads and decides again for the conflicts.
--
-- `batch` is a JSON document of parallel lists keyed by `i`, the stream's index in the batch:
--   channel   the NOTIFY channel
--   streams   [{i, t: tenant, s: stream id, e: expected version (0: new stream), n: version after}]
--   claims    [{i, t, a: agent, p: principal, m: messageId, k: task id, d: message digest}]
--   events    [{i, id, v: stream version, y: type, sv: schema version, d: data, m: metadata}]
--   views     [{i, task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task}]
--   work      [{i, task_id, agent_id, status: 'queued' | 'leased' | 'idle', attempt, lease_epoch, worker_id,
--               lease_expires_at, cancel_deadline}]
--   notices   [{i, n: payload}]
-- Returns one row per stream NOT written: 'duplicate' (its messageId was already claimed) or 'conflict'.
CREATE FUNCTION events.append_task_batch(batch jsonb)
  RETURNS TABLE (stream_index integer, outcome text)
  LANGUAGE plpgsql AS $$
DECLARE
  duplicate integer[];
  written integer[];
BEGIN
  -- 1. SendMessage idempotency: a messageId another transaction holds (committed or not: we wait) is a repeat.
  --    (Statements with nothing to do are skipped: each one costs a parse of its list and a plan.)
  duplicate := '{}';
  IF jsonb_array_length(batch -> 'claims') > 0 THEN
  WITH c AS (
    SELECT * FROM jsonb_to_recordset(batch -> 'claims')
      AS x(i integer, t text, a text, p text, m text, k text, d text)
  ), claimed AS (
    INSERT INTO ops.message_ids (tenant_id, agent_id, principal_id, message_id, task_id, message_digest)
    SELECT t, a, p, m, k, d FROM c ORDER BY t, a, p, m
    ON CONFLICT DO NOTHING
    RETURNING tenant_id, agent_id, principal_id, message_id
  )
  SELECT coalesce(array_agg(c.i), '{}') INTO duplicate FROM c
   WHERE NOT EXISTS (
     SELECT 1 FROM claimed
      WHERE (claimed.tenant_id, claimed.agent_id, claimed.principal_id, claimed.message_id)
          = (c.t, c.a, c.p, c.m));
  END IF;

  -- 2. The per-stream guards. Existing streams are locked first, in one order for every writer: two batches
  --    (two replicas granting the same queued task, say) then wait for each other instead of deadlocking,
  --    and the later one finds the stream moved on (a conflict, decided again on a fresh read).
  PERFORM 1
     FROM events.streams st
     JOIN jsonb_to_recordset(batch -> 'streams') AS x(i integer, t text, s text, e integer)
       ON st.tenant_id = x.t AND st.stream_id = x.s
    WHERE x.e > 0 AND NOT (x.i = ANY (duplicate))
    ORDER BY st.tenant_id, st.stream_id
      FOR UPDATE OF st;

  -- The guards. A transaction older than the one that wrote a stream's last event must not
  --    append after it (the relay publishes in transaction-id order): that counts as a conflict too.
  WITH s AS (
    SELECT * FROM jsonb_to_recordset(batch -> 'streams')
      AS x(i integer, t text, s text, e integer, n integer)
     WHERE NOT (x.i = ANY (duplicate))
  ), created AS (
    INSERT INTO events.streams (tenant_id, stream_id, version)
    SELECT t, s, n FROM s WHERE e = 0 ORDER BY t, s
    ON CONFLICT DO NOTHING
    RETURNING tenant_id, stream_id
  ), moved AS (
    UPDATE events.streams st SET version = s.n
      FROM s
     WHERE s.e > 0 AND st.tenant_id = s.t AND st.stream_id = s.s AND st.version = s.e
       AND NOT EXISTS (
         SELECT 1 FROM events.messages m
          WHERE m.tenant_id = s.t AND m.stream_id = s.s AND m.stream_version = s.e
            AND m.transaction_id > pg_current_xact_id())
    RETURNING st.tenant_id, st.stream_id
  )
  SELECT coalesce(array_agg(s.i), '{}') INTO written FROM s
   WHERE EXISTS (SELECT 1 FROM created WHERE (created.tenant_id, created.stream_id) = (s.t, s.s))
      OR EXISTS (SELECT 1 FROM moved WHERE (moved.tenant_id, moved.stream_id) = (s.t, s.s));

  -- 3. A messageId claimed for a stream that conflicted is given back (the retry claims it again).
  IF cardinality(written) + cardinality(duplicate) < jsonb_array_length(batch -> 'streams')
     AND jsonb_array_length(batch -> 'claims') > 0 THEN
    DELETE FROM ops.message_ids mi
     USING jsonb_to_recordset(batch -> 'claims') AS c(i integer, t text, a text, p text, m text)
     WHERE NOT (c.i = ANY (written)) AND NOT (c.i = ANY (duplicate))
       AND (mi.tenant_id, mi.agent_id, mi.principal_id, mi.message_id) = (c.t, c.a, c.p, c.m);
  END IF;

  -- 4. The events, in stream order within each stream.
  INSERT INTO events.messages
    (event_id, tenant_id, stream_id, stream_version, event_type, schema_version, data, metadata)
  SELECT ev.id, s.t, s.s, ev.v, ev.y, ev.sv, ev.d, ev.m
    FROM jsonb_to_recordset(batch -> 'events')
      AS ev(i integer, id uuid, v integer, y text, sv smallint, d jsonb, m jsonb)
    JOIN jsonb_to_recordset(batch -> 'streams') AS s(i integer, t text, s text) ON s.i = ev.i
   WHERE ev.i = ANY (written)
   ORDER BY ev.i, ev.v;

  -- 5. The task view (a row only ever moves forward).
  INSERT INTO read.task_view
    (tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task)
  SELECT s.t, v.task_id, v.agent_id, v.owner_id, v.context_id, v.state, v.status_timestamp, v.version, v.task
    FROM jsonb_to_recordset(batch -> 'views')
      AS v(i integer, task_id text, agent_id text, owner_id text, context_id text, state text,
           status_timestamp timestamptz, version integer, task jsonb)
    JOIN jsonb_to_recordset(batch -> 'streams') AS s(i integer, t text, s text) ON s.i = v.i
   WHERE v.i = ANY (written)
   ORDER BY s.t, v.task_id
  ON CONFLICT (tenant_id, task_id) DO UPDATE SET
    state = EXCLUDED.state, status_timestamp = EXCLUDED.status_timestamp,
    version = EXCLUDED.version, task = EXCLUDED.task
   WHERE task_view.version < EXCLUDED.version;

  -- 6. The work queue: a row while the task is queued or leased, none otherwise. Heartbeats extend
  --    lease_expires_at outside the log, so an unchanged epoch keeps the renewed expiry.
  IF jsonb_path_exists(batch, '$.work[*] ? (@.status == "idle")') THEN
    DELETE FROM ops.task_work tw
     USING jsonb_to_recordset(batch -> 'work') AS w(i integer, task_id text, status text)
      JOIN jsonb_to_recordset(batch -> 'streams') AS s(i integer, t text) ON s.i = w.i
     WHERE w.i = ANY (written) AND w.status = 'idle' AND tw.tenant_id = s.t AND tw.task_id = w.task_id;
  END IF;
  IF jsonb_path_exists(batch, '$.work[*] ? (@.status != "idle")') THEN
  INSERT INTO ops.task_work
    (tenant_id, task_id, agent_id, status, queued_at, attempt, lease_epoch, worker_id, lease_expires_at,
     cancel_deadline)
  SELECT s.t, w.task_id, w.agent_id, w.status, clock_timestamp(), w.attempt, w.lease_epoch, w.worker_id,
         w.lease_expires_at, w.cancel_deadline
    FROM jsonb_to_recordset(batch -> 'work')
      AS w(i integer, task_id text, agent_id text, status text, attempt integer, lease_epoch bigint,
           worker_id text, lease_expires_at timestamptz, cancel_deadline timestamptz)
    JOIN jsonb_to_recordset(batch -> 'streams') AS s(i integer, t text) ON s.i = w.i
   WHERE w.i = ANY (written) AND w.status <> 'idle'
   ORDER BY s.t, w.task_id
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
  PERFORM pg_notify(batch ->> 'channel', n.n)
     FROM jsonb_to_recordset(batch -> 'notices') AS n(i integer, n text)
    WHERE n.i = ANY (written);

  IF cardinality(written) = jsonb_array_length(batch -> 'streams') THEN
    RETURN;
  END IF;
  RETURN QUERY
    SELECT s.i, CASE WHEN s.i = ANY (duplicate) THEN 'duplicate' ELSE 'conflict' END
      FROM jsonb_to_recordset(batch -> 'streams') AS s(i integer)
     WHERE NOT (s.i = ANY (written));
END;
$$;

-- Down Migration

DROP FUNCTION events.append_task_batch(jsonb);
