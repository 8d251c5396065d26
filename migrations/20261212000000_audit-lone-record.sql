-- Up Migration

-- audit.chain_records chains a lone record, as every batch at low load has, in two statements: it makes its
-- tenant's head if missing, then locks it, moves it on and writes the record; the general path takes four, at
-- about three times the cost (docs/benchmarks.md). The chain itself, its hashes and `audit verify` are unchanged.
-- Function file: audit.chain_records.sql sha256:989b658d57b4d2bcc1a7b762f2c39c1f888cd33d1214a7d61aef1f73289e33b7

-- Down Migration

-- Nothing: a function file's earlier definition cannot be brought back (docs/adr/0014-function-files.md).
