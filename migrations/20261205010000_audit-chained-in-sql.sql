-- Up Migration

-- Audit records chained by Postgres (libs/audit/README.md, hash version 2), so that a record can be written in
-- the transaction of the change it records (a task batch), by any number of writers, without the writer
-- knowing where the chain ends. The caller hashes what only it can hash (the RFC 8785 JSON of the record's
-- fields, without seq: the digest); Postgres numbers the record under the head lock and links it:
-- hash = sha256(prev_hash || int8send(seq) || digest). Records written before keep version 1 (the JSON with
-- seq, chained by the writer), and `audit verify` checks each record by its own version.
ALTER TABLE audit.records ADD COLUMN hash_version smallint NOT NULL DEFAULT 1 CHECK (hash_version IN (1, 2));

-- Appends records to their tenants' chains, in array order within each tenant. Creates missing heads, then
-- locks the heads in tenant order (the order every writer of audit.chain_heads locks in, so writers touching
-- several tenants cannot deadlock), waits for the writers before it, and chains after them.
CREATE FUNCTION audit.chain_records(
  tenant_ids text[], record_ids uuid[], occurred timestamptz[], principals text[], credentials text[],
  sources text[], operations text[], bindings text[], resources text[], outcomes text[], reasons text[],
  traces text[], digests bytea[])
  RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  n integer := cardinality(tenant_ids);
  -- The locked heads, in tenant order, moved along as records are chained.
  head_tenants text[];
  head_seqs bigint[];
  head_hashes bytea[];
  -- The chain position of each record, by its index in the arrays.
  seqs bigint[];
  prev_hashes bytea[];
  hashes bytea[];
  k integer := 0;
  i integer;
  t text;
BEGIN
  IF n IS NULL OR cardinality(record_ids) IS DISTINCT FROM n OR cardinality(occurred) IS DISTINCT FROM n
     OR cardinality(principals) IS DISTINCT FROM n OR cardinality(credentials) IS DISTINCT FROM n
     OR cardinality(sources) IS DISTINCT FROM n OR cardinality(operations) IS DISTINCT FROM n
     OR cardinality(bindings) IS DISTINCT FROM n OR cardinality(resources) IS DISTINCT FROM n
     OR cardinality(outcomes) IS DISTINCT FROM n OR cardinality(reasons) IS DISTINCT FROM n
     OR cardinality(traces) IS DISTINCT FROM n OR cardinality(digests) IS DISTINCT FROM n THEN
    RAISE EXCEPTION 'audit.chain_records: the arrays must all have the same length'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF n = 0 THEN
    RETURN;
  END IF;

  INSERT INTO audit.chain_heads (tenant_id, seq, hash)
  SELECT DISTINCT u.t, 0, decode(repeat('00', 32), 'hex') FROM unnest(tenant_ids) AS u (t) ORDER BY u.t
  ON CONFLICT (tenant_id) DO NOTHING;

  -- The lock is taken row by row in sort order; a head another transaction holds is read as it committed.
  SELECT array_agg(h.tenant_id ORDER BY h.tenant_id), array_agg(h.seq ORDER BY h.tenant_id),
         array_agg(h.hash ORDER BY h.tenant_id)
    INTO head_tenants, head_seqs, head_hashes
    FROM (SELECT c.tenant_id, c.seq, c.hash FROM audit.chain_heads c
           WHERE c.tenant_id = ANY (tenant_ids) ORDER BY c.tenant_id FOR UPDATE) AS h;

  seqs := array_fill(NULL::bigint, ARRAY[n]);
  prev_hashes := array_fill(NULL::bytea, ARRAY[n]);
  hashes := array_fill(NULL::bytea, ARRAY[n]);
  -- Tenant by tenant (the heads' order), each tenant's records in array order: one sort, no rescan.
  FOR i, t IN SELECT u.i, u.t FROM unnest(tenant_ids) WITH ORDINALITY AS u (t, i) ORDER BY u.t, u.i LOOP
    IF k = 0 OR t <> head_tenants[k] THEN
      k := k + 1;
      IF head_tenants[k] IS DISTINCT FROM t THEN
        -- Deleted by a purge that committed while this transaction waited for the lock.
        RAISE EXCEPTION 'audit.chain_records: the chain head of tenant % is gone', t
          USING ERRCODE = 'serialization_failure';
      END IF;
    END IF;
    IF octet_length(digests[i]) IS DISTINCT FROM 32 THEN
      RAISE EXCEPTION 'audit.chain_records: digest % is not 32 bytes', i
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    seqs[i] := head_seqs[k] + 1;
    prev_hashes[i] := head_hashes[k];
    hashes[i] := sha256(head_hashes[k] || int8send(seqs[i]) || digests[i]);
    head_seqs[k] := seqs[i];
    head_hashes[k] := hashes[i];
  END LOOP;

  INSERT INTO audit.records (tenant_id, seq, record_id, occurred_at, principal_id, credential_id,
                             source_address, operation, binding, resource, outcome, reason, trace_id,
                             prev_hash, hash, hash_version)
  SELECT r.*, 2
    FROM unnest(tenant_ids, seqs, record_ids, occurred, principals, credentials, sources, operations, bindings,
                resources, outcomes, reasons, traces, prev_hashes, hashes) AS r;

  UPDATE audit.chain_heads c SET seq = v.s, hash = v.x
    FROM unnest(head_tenants, head_seqs, head_hashes) AS v (t, s, x)
   WHERE c.tenant_id = v.t;
END;
$$;

-- Replaced by audit.chain_records: no writer chains in Node any more.
DROP FUNCTION audit.append_records(text[], bigint[], bytea[], bigint[], bytea[], text[], bigint[], uuid[],
  timestamptz[], text[], text[], text[], text[], text[], text[], text[], text[], text[], bytea[], bytea[]);

-- Down Migration

CREATE FUNCTION audit.append_records(
  tenants text[], expected_seqs bigint[], expected_hashes bytea[], new_seqs bigint[], new_hashes bytea[],
  r_tenant_ids text[], r_seqs bigint[], r_ids uuid[], r_occurred timestamptz[], r_principals text[],
  r_credentials text[], r_sources text[], r_operations text[], r_bindings text[], r_resources text[],
  r_outcomes text[], r_reasons text[], r_traces text[], r_prev_hashes bytea[], r_hashes bytea[])
  RETURNS TABLE (moved_tenant text, moved_seq bigint, moved_hash bytea)
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit.chain_heads (tenant_id, seq, hash)
  SELECT t, 0, decode(repeat('00', 32), 'hex') FROM unnest(tenants) AS t ORDER BY t
  ON CONFLICT (tenant_id) DO NOTHING;

  PERFORM 1 FROM audit.chain_heads h WHERE h.tenant_id = ANY (tenants) ORDER BY h.tenant_id FOR UPDATE;

  RETURN QUERY
    SELECT h.tenant_id, h.seq, h.hash
      FROM audit.chain_heads h
      JOIN unnest(tenants, expected_seqs, expected_hashes) AS e (t, s, x) ON h.tenant_id = e.t
     WHERE h.seq <> e.s OR h.hash <> e.x;
  IF FOUND THEN
    RETURN;
  END IF;

  INSERT INTO audit.records (tenant_id, seq, record_id, occurred_at, principal_id, credential_id,
                             source_address, operation, binding, resource, outcome, reason, trace_id,
                             prev_hash, hash)
  SELECT * FROM unnest(r_tenant_ids, r_seqs, r_ids, r_occurred, r_principals, r_credentials, r_sources,
                       r_operations, r_bindings, r_resources, r_outcomes, r_reasons, r_traces, r_prev_hashes,
                       r_hashes);

  UPDATE audit.chain_heads h SET seq = v.s, hash = v.x
    FROM unnest(tenants, new_seqs, new_hashes) AS v (t, s, x)
   WHERE h.tenant_id = v.t;
END;
$$;

DROP FUNCTION audit.chain_records(text[], uuid[], timestamptz[], text[], text[], text[], text[], text[], text[],
  text[], text[], text[], bytea[]);

-- Records written with version 2 cannot be verified once the column is gone.
ALTER TABLE audit.records DROP COLUMN hash_version;
