-- Looking a key up (issue 36; docs/api.md, "Looking a key up"): GET /idempotency-keys/{key} answers from the
-- durable record what became of a key, so the record keeps the request's path, and a replay from PostgreSQL
-- learns the record's expires_at (the Idempotency-Expires of every recorded answer).
--
-- The path reaches the record as V5's trace reaches the event: the _checked overloads below set it for their
-- transaction only (set_config(..., true)) and the column's default reads it, so the _core functions, which
-- hold the payments' logic, stay as they are (no second copy of them to keep in step, and their cached plans
-- stay valid), and the statement stays one round trip. A function that inserts a record itself (transfers)
-- may name the column instead. '' is what the setting reads once a transaction that set it has ended on the
-- session, NULL where none ever did: both store NULL, as do the previous version's instances, which call the
-- old overloads. Rows written before this migration have no path either (NULL): the lookup answers without it.
--
-- The method is not stored: every request that takes a key is a POST (API.md). The day another method takes
-- one, its migration adds the column with DEFAULT 'POST', which is exact for every earlier row and rewrites
-- nothing (a constant default is kept in the catalogue).
--
-- expires_at: the fresh path returns p_expires_at, which it has already; only a replay reads it from the record
-- (the row the _core function has just read, by its primary key).

-- Two statements: a column added with this default at once would take its value for every existing row from
-- the migration's own session (NULL, but by accident).
ALTER TABLE idempotency_records ADD COLUMN request_path text;
ALTER TABLE idempotency_records ALTER COLUMN request_path SET DEFAULT nullif(current_setting('ledger.request_path', true), '');

-- What the statement's writes read for their transaction only: the trace (the event writer, V5) and the path
-- (the record's default).
CREATE FUNCTION ledger_set_request(p_trace_parent text, p_request_path text)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_trace_parent IS NOT NULL THEN
        PERFORM set_config('ledger.trace_parent', p_trace_parent, true);
    END IF;
    IF p_request_path IS NOT NULL THEN
        PERFORM set_config('ledger.request_path', p_request_path, true);
    END IF;
END
$$;

CREATE FUNCTION ledger_open_account_checked(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_currency text, p_destinations text[], p_trace_parent text, p_request_path text)
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
               account_id uuid, currency text, created_at timestamptz, expires_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM ledger_set_request(p_trace_parent, p_request_path);
    RETURN QUERY
    SELECT r.replayed, r.fingerprint = p_fingerprint, r.outcome, r.account_id, r.currency, r.created_at,
           CASE WHEN r.replayed THEN (SELECT i.expires_at FROM idempotency_records i
                                       WHERE i.client = p_client AND i.key_hash = p_key_hash)
                ELSE p_expires_at END
      FROM ledger_open_account_core(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
                                    p_currency, p_destinations) r;
END
$$;

CREATE FUNCTION ledger_post_transaction_checked(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_destinations text[], p_trace_parent text, p_request_path text)
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
               entry_id uuid, account_id uuid, type text, amount bigint, sequence bigint,
               reference text, balance_after bigint, created_at timestamptz,
               balance bigint, last_sequence bigint, expires_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM ledger_set_request(p_trace_parent, p_request_path);
    RETURN QUERY
    SELECT r.replayed, r.fingerprint = p_fingerprint, r.outcome, r.entry_id, r.account_id, r.type, r.amount,
           r.sequence, r.reference, r.balance_after, r.created_at, r.balance, r.last_sequence,
           CASE WHEN r.replayed THEN (SELECT i.expires_at FROM idempotency_records i
                                       WHERE i.client = p_client AND i.key_hash = p_key_hash)
                ELSE p_expires_at END
      FROM ledger_post_transaction_core(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
                                        p_entry_id, p_type, p_amount, p_sequence, p_reference, p_destinations) r;
END
$$;
