-- Up Migration

-- One statement per audit flush (issue 9: every round trip to Postgres costs the hot path CPU in both
-- processes). The writer keeps the chain ends it last wrote or saw, hashes the batch on them and hands over
-- records and new heads together. The function locks the batch's heads in tenant order (creating a missing
-- head at the genesis hash), and writes only when every head is still where the writer expected it; otherwise
-- it writes nothing and returns the heads that moved (another writer appended, or a purge restarted the
-- chain), and the writer hashes the batch again on them.
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

-- Down Migration

DROP FUNCTION audit.append_records(text[], bigint[], bytea[], bigint[], bytea[], text[], bigint[], uuid[],
  timestamptz[], text[], text[], text[], text[], text[], text[], text[], text[], text[], bytea[], bytea[]);
