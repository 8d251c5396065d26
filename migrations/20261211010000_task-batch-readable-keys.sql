-- Up Migration

-- events.append_task_batch takes readable keys (apps/task-service/src/write/task-batch.ts, `TaskBatch`): every
-- row names its stream by `stream_index`, and its other keys are the columns it fills (`tenant_id`,
-- `stream_id`, `expected_version`, `event_type`, `message_digest`, …), where each had one or two letters
-- (`i`, `t`, `s`, `e`, `y`, `d`, …) whose meaning changed from list to list. The batches of the previous
-- release, which its replicas send during a rollout, are given the new keys first
-- (events.task_batch_from_short_keys).
-- Function file: events.append_task_batch.sql sha256:14865c622a6e2a2a08359f8c684c2dd045c1ad707a4ff9f96f513976b5a5dc38

-- Down Migration

-- Nothing: a function file's earlier definition cannot be brought back (docs/adr/0014-function-files.md).
