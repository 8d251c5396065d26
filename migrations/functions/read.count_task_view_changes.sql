-- read.count_task_view_changes: its current definition (docs/adr/0014-function-files.md). Change it here, and
-- name the file's new SHA-256 in a new migration.
--
-- The statement triggers on read.task_view (migration 20261201000000) keep read.task_counts: one delta per key
-- and state a statement changed (an update that keeps a task's key and state nets to zero and writes nothing).
-- About one statement in 16 that changed a key folds it, which keeps a few dozen rows per key. A fold scans the
-- key's index entries, and those a transaction deleted stay there until it ends: a transaction that writes the
-- view in many statements (`rebuild-task-view`: one per task) would make each fold slower than the last. So
-- only a transaction's first 64 statements fold as they go; a longer one instead folds, at commit, every key
-- with more than 16 rows (the deferred trigger on read.task_count_folds), and leaves few rows behind.
CREATE OR REPLACE FUNCTION read.count_task_view_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  statements integer;
  changed record;
BEGIN
  -- INSERT … ON CONFLICT DO UPDATE (the task batch's view statement) fires the INSERT and the UPDATE trigger
  -- both, one of them with no rows: it has nothing to count, and is no statement to count towards a fold.
  IF TG_OP = 'DELETE' THEN
    IF NOT EXISTS (SELECT 1 FROM old_rows) THEN
      RETURN NULL;
    END IF;
  ELSIF NOT EXISTS (SELECT 1 FROM new_rows) THEN
    RETURN NULL;
  END IF;
  statements := coalesce(nullif(current_setting('a2a.task_count_statements', true), ''), '0')::integer + 1;
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
