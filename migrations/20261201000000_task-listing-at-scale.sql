-- Up Migration

-- ListTasks (spec §3.1.4) at a million tasks per caller: every page is one keyset range of one index in
-- status-timestamp order, and totalSize is read from counts instead of counting the caller's rows.

-- `status` filter: newest first within one state, instead of walking every state's rows of the caller.
CREATE INDEX task_view_listing_state
  ON read.task_view (tenant_id, agent_id, owner_id, state, status_timestamp DESC, task_id DESC);
-- `contextId` filter, scoped like every other read (tenant, agent, owner); it replaces the unscoped one. The
-- state rides along so that `contextId` + `status` pages and their counts need no heap visit per entry.
CREATE INDEX task_view_listing_context
  ON read.task_view (tenant_id, agent_id, owner_id, context_id, status_timestamp DESC, task_id DESC)
  INCLUDE (state);
DROP INDEX read.task_view_context;

-- How many view rows each (tenant, agent, owner, state) has, as deltas that add up to the count: totalSize of a
-- listing without a contextId or statusTimestampAfter filter is a sum over a few rows. A pure function of
-- read.task_view, kept exact by the statement triggers below in the transaction that changes the view.
--
-- Writers only ever INSERT deltas, so keeping the counts never waits for a lock and cannot deadlock, however
-- many tasks one transaction writes and in whatever order (an upserted counter row would be locked until
-- commit: concurrent writers of one caller's tasks would queue on it, and two transactions that write several
-- tasks could deadlock on two such rows). Now and then a writer folds a key's deltas into one row
-- (read.compact_task_counts), skipping rows another transaction is folding.
CREATE TABLE read.task_counts (
  tenant_id text NOT NULL,
  agent_id text NOT NULL,
  owner_id text NOT NULL,
  state text NOT NULL,
  tasks bigint NOT NULL
);
CREATE INDEX task_counts_key ON read.task_counts (tenant_id, agent_id, owner_id, state) INCLUDE (tasks);

-- Folds the deltas of one key into one row (none when they add up to zero). Rows locked by a concurrent fold
-- are skipped, never waited for; rows of transactions still in flight are not visible and are folded later.
-- Only under READ COMMITTED, where a row deleted by a concurrent fold is skipped rather than a serialization
-- failure.
CREATE FUNCTION read.compact_task_counts(tenant text, agent text, owner text, task_state text)
  RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RETURN;
  END IF;
  WITH folded AS (
    DELETE FROM read.task_counts
     WHERE ctid = ANY (ARRAY(
       SELECT ctid FROM read.task_counts
        WHERE tenant_id = tenant AND agent_id = agent AND owner_id = owner AND state = task_state
          FOR UPDATE SKIP LOCKED))
    RETURNING tasks)
  INSERT INTO read.task_counts (tenant_id, agent_id, owner_id, state, tasks)
  SELECT tenant, agent, owner, task_state, sum(tasks) FROM folded HAVING sum(tasks) <> 0;
END;
$$;

-- One delta per key and state a statement changed (an update that keeps a task's key and state nets to zero and
-- writes nothing). About one statement in 16 that changed a key folds it, which keeps a few dozen rows per key.
--
-- A fold scans the key's index entries, and those a transaction deleted stay there until it ends: a transaction
-- that writes the view in many statements (`rebuild-task-view`: one per task) would make each fold slower than
-- the last. So only a transaction's first 64 statements fold as they go; a longer one instead folds, at commit,
-- every key with more than 16 rows (the deferred trigger on read.task_count_folds), and leaves few rows behind.
CREATE FUNCTION read.count_task_view_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  statements integer := coalesce(nullif(current_setting('a2a.task_count_statements', true), ''), '0')::integer + 1;
  changed record;
BEGIN
  PERFORM set_config('a2a.task_count_statements', statements::text, true);
  IF statements = 65 THEN
    INSERT INTO read.task_count_folds DEFAULT VALUES;
  END IF;
  IF TG_OP = 'INSERT' THEN
    FOR changed IN
      INSERT INTO read.task_counts (tenant_id, agent_id, owner_id, state, tasks)
      SELECT tenant_id, agent_id, owner_id, state, count(*) FROM new_rows GROUP BY 1, 2, 3, 4
      RETURNING tenant_id, agent_id, owner_id, state
    LOOP
      IF statements <= 64 AND random() < 0.0625 THEN
        PERFORM read.compact_task_counts(changed.tenant_id, changed.agent_id, changed.owner_id, changed.state);
      END IF;
    END LOOP;
  ELSIF TG_OP = 'UPDATE' THEN
    FOR changed IN
      INSERT INTO read.task_counts (tenant_id, agent_id, owner_id, state, tasks)
      SELECT tenant_id, agent_id, owner_id, state, sum(delta)
        FROM (SELECT tenant_id, agent_id, owner_id, state, -1 AS delta FROM old_rows
              UNION ALL
              SELECT tenant_id, agent_id, owner_id, state, 1 FROM new_rows) AS changes
       GROUP BY 1, 2, 3, 4 HAVING sum(delta) <> 0
      RETURNING tenant_id, agent_id, owner_id, state
    LOOP
      IF statements <= 64 AND random() < 0.0625 THEN
        PERFORM read.compact_task_counts(changed.tenant_id, changed.agent_id, changed.owner_id, changed.state);
      END IF;
    END LOOP;
  ELSE
    FOR changed IN
      INSERT INTO read.task_counts (tenant_id, agent_id, owner_id, state, tasks)
      SELECT tenant_id, agent_id, owner_id, state, -count(*) FROM old_rows GROUP BY 1, 2, 3, 4
      RETURNING tenant_id, agent_id, owner_id, state
    LOOP
      IF statements <= 64 AND random() < 0.0625 THEN
        PERFORM read.compact_task_counts(changed.tenant_id, changed.agent_id, changed.owner_id, changed.state);
      END IF;
    END LOOP;
  END IF;
  RETURN NULL;
END;
$$;

-- A row here while a long transaction (see above) runs; its deferred trigger folds at commit and removes it.
CREATE TABLE read.task_count_folds (
  transaction_id xid8 PRIMARY KEY DEFAULT pg_current_xact_id()
);

CREATE FUNCTION read.fold_task_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  crowded record;
BEGIN
  DELETE FROM read.task_count_folds WHERE transaction_id = NEW.transaction_id;
  FOR crowded IN
    SELECT tenant_id, agent_id, owner_id, state FROM read.task_counts GROUP BY 1, 2, 3, 4 HAVING count(*) > 16
  LOOP
    PERFORM read.compact_task_counts(crowded.tenant_id, crowded.agent_id, crowded.owner_id, crowded.state);
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER task_count_folds_at_commit AFTER INSERT ON read.task_count_folds
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION read.fold_task_counts();

CREATE FUNCTION read.clear_task_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM read.task_counts;
  RETURN NULL;
END;
$$;

-- Transition tables cannot be shared by several events (nor narrowed to UPDATE OF state): one trigger each.
-- INSERT … ON CONFLICT DO UPDATE (the inline projection) fires both: inserted rows reach the INSERT trigger's
-- table, updated rows the UPDATE trigger's.
CREATE TRIGGER task_view_counts_insert AFTER INSERT ON read.task_view
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION read.count_task_view_changes();
CREATE TRIGGER task_view_counts_update AFTER UPDATE ON read.task_view
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION read.count_task_view_changes();
CREATE TRIGGER task_view_counts_delete AFTER DELETE ON read.task_view
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION read.count_task_view_changes();
CREATE TRIGGER task_view_counts_truncate AFTER TRUNCATE ON read.task_view
  FOR EACH STATEMENT EXECUTE FUNCTION read.clear_task_counts();

-- Recounts from the view, one row per key: the counts of a database that had tasks before this migration, and a
-- repair tool (`rebuild-task-view` needs none: its DELETE and inserts go through the triggers). The SHARE lock
-- waits for the view's writers in flight and keeps new ones out until the caller's transaction ends.
CREATE FUNCTION read.recount_tasks() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE read.task_view IN SHARE MODE;
  DELETE FROM read.task_counts;
  INSERT INTO read.task_counts (tenant_id, agent_id, owner_id, state, tasks)
  SELECT tenant_id, agent_id, owner_id, state, count(*) FROM read.task_view GROUP BY 1, 2, 3, 4;
END;
$$;

SELECT read.recount_tasks();

-- Down Migration

DROP FUNCTION read.recount_tasks();
DROP TRIGGER task_view_counts_truncate ON read.task_view;
DROP TRIGGER task_view_counts_delete ON read.task_view;
DROP TRIGGER task_view_counts_update ON read.task_view;
DROP TRIGGER task_view_counts_insert ON read.task_view;
DROP FUNCTION read.clear_task_counts();
DROP TRIGGER task_count_folds_at_commit ON read.task_count_folds;
DROP FUNCTION read.fold_task_counts();
DROP TABLE read.task_count_folds;
DROP FUNCTION read.count_task_view_changes();
DROP FUNCTION read.compact_task_counts(text, text, text, text);
DROP TABLE read.task_counts;
CREATE INDEX task_view_context ON read.task_view (tenant_id, context_id);
DROP INDEX read.task_view_listing_context;
DROP INDEX read.task_view_listing_state;
