-- audit.chain_records and audit.chain_record: their current definitions (docs/adr/0014-function-files.md).
-- Change them here, and name the file's new SHA-256 in a new migration.

-- audit.chain_record: one record, chained as audit.chain_records chains it (the task batch calls it with the
-- columns of its lone record, without building arrays). Its tenant's head is made if missing; then one
-- statement locks the head, moves it on and writes the record.
CREATE OR REPLACE FUNCTION audit.chain_record(
  tenant text, id uuid, occurred timestamptz, principal text, credential text, source text,
  operation text, binding text, resource text, outcome text, reason text, trace text, digest bytea)
  RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF octet_length(digest) IS DISTINCT FROM 32 THEN
    RAISE EXCEPTION 'audit.chain_record: the digest is not 32 bytes' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  INSERT INTO audit.chain_heads (tenant_id, seq, hash)
  VALUES (tenant, 0, decode(repeat('00', 32), 'hex'))
  ON CONFLICT (tenant_id) DO NOTHING;
  WITH head AS (
    SELECT c.tenant_id, c.seq, c.hash FROM audit.chain_heads c WHERE c.tenant_id = tenant FOR UPDATE
  ), moved AS (
    UPDATE audit.chain_heads c
       SET seq = head.seq + 1, hash = sha256(head.hash || int8send(head.seq + 1) || digest)
      FROM head
     WHERE c.tenant_id = head.tenant_id
    RETURNING c.seq, head.hash AS prev_hash, c.hash
  )
  INSERT INTO audit.records (tenant_id, seq, record_id, occurred_at, principal_id, credential_id,
                             source_address, operation, binding, resource, outcome, reason, trace_id,
                             prev_hash, hash, hash_version)
  SELECT tenant, moved.seq, id, occurred, principal, credential, source, operation, binding, resource,
         outcome, reason, trace, moved.prev_hash, moved.hash, 2
    FROM moved;
  IF NOT FOUND THEN
    -- Deleted by a purge that committed while this transaction waited for the lock.
    RAISE EXCEPTION 'audit.chain_record: the chain head of tenant % is gone', tenant
      USING ERRCODE = 'serialization_failure';
  END IF;
END;
$$;

-- Appends records to their tenants' chains (libs/audit/README.md, hash version 2), in array order within each
-- tenant. Creates missing heads, then locks the heads in tenant order (the order every writer of
-- audit.chain_heads locks in, so writers touching several tenants cannot deadlock), waits for the writers
-- before it, and chains after them: hash = sha256(prev_hash || int8send(seq) || digest). The caller hashes
-- what only it can hash (the RFC 8785 JSON of the record's fields, without seq: the digest).
CREATE OR REPLACE FUNCTION audit.chain_records(
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

  -- One record, as every batch at low load has: the statements of audit.chain_record instead of the four
  -- below, at about a third of their cost.
  IF n = 1 THEN
    PERFORM audit.chain_record(tenant_ids[1], record_ids[1], occurred[1], principals[1], credentials[1],
                               sources[1], operations[1], bindings[1], resources[1], outcomes[1], reasons[1],
                               traces[1], digests[1]);
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

  -- One statement per head (a batch rarely spans more than one tenant): its plan is made once per session,
  -- where an UPDATE joined to the unnested arrays was planned again on every call.
  FOR h IN 1 .. cardinality(head_tenants) LOOP
    UPDATE audit.chain_heads c SET seq = head_seqs[h], hash = head_hashes[h] WHERE c.tenant_id = head_tenants[h];
  END LOOP;
END;
$$;
