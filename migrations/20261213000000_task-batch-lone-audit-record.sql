-- Up Migration

-- Less fixed work in each task batch (issue 35): a batch's lone audit record is chained by
-- audit.chain_record, with its columns as the batch holds them, instead of thirteen one-element arrays built for
-- audit.chain_records; and the task-count trigger that INSERT … ON CONFLICT DO UPDATE fires with no rows (the
-- INSERT one when every row was updated, the UPDATE one when every row was inserted) returns before it writes or
-- counts anything. The chain, its hashes, `audit verify` and the counts are unchanged.
-- Function file: audit.chain_records.sql sha256:c1838e27804d50fb8ee986cf515ed00543d8a444a63e111dab89693b4b6257ca
-- Function file: events.append_task_batch.sql sha256:6d6edab6dea77a27191fec17dcd6769281f286b8b1852d00c6617ad4d8c8eace
-- Function file: read.count_task_view_changes.sql sha256:fb73ada998f4a0d45ffc5f8af87244be80ef76306721097139dfae356e330cc1

-- Down Migration

-- Nothing: a function file's earlier definition cannot be brought back (docs/adr/0014-function-files.md).
