-- Up Migration

-- Function files (docs/adr/0014-function-files.md): events.append_task_batch and audit.chain_records, copied
-- in full into every migration that changed them until now, have one definition each from here on, in
-- migrations/functions/. The migration runner runs a function file after the versioned migrations whenever its
-- content is not the one the database last got. A migration that changes a function names the file's new
-- SHA-256 in a line like these (the unit test function-files.unit.spec.ts prints the line to add):
-- Function file: audit.chain_records.sql sha256:f990190f28bb2a5d2f338aa1518a6a4ac8646300523393f66e7670aeb7814e16
-- Function file: events.append_task_batch.sql sha256:5554d0ada142749552872a99bef0fff436e77975e0e5f0cc648030c4a1cd7126
--
-- Their definitions are those of 20261208000000 and 20261209000000, except that events.append_task_batch no
-- longer takes the batches of the release before 20261209000000 (rows without their stream's tenant and id):
-- no replica of that release runs any more. Its shim goes.

DROP FUNCTION events.task_rows_with_streams(jsonb, jsonb);

-- Down Migration

-- (The function files' definitions stay: there is no earlier version of them to go back to.)
CREATE FUNCTION events.task_rows_with_streams(list jsonb, streams jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE
  AS $$
  SELECT coalesce(jsonb_agg(r.x || jsonb_build_object('t', s.y -> 't', 's', s.y -> 's') ORDER BY r.o), '[]')
    FROM jsonb_array_elements(list) WITH ORDINALITY AS r (x, o)
    JOIN jsonb_array_elements(streams) AS s (y) ON s.y -> 'i' = r.x -> 'i'
$$;
