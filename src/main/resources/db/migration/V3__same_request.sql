-- The statements of a POST say whether the request stored under the key is this one (same_request),
-- decided where the data is: the service no longer reads the stored fingerprint back to compare it.
-- Wrappers of V2's functions, which stay as they are (their callers, instances of the previous version
-- during a rolling upgrade, keep working, and their prepared statements keep their result type); the
-- stored fingerprints and their bytes are unchanged, so every recorded answer still replays.

CREATE FUNCTION ledger_open_account_checked(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_currency text, p_events boolean)
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
               account_id uuid, currency text, created_at timestamptz)
LANGUAGE sql AS $$
    SELECT r.replayed, r.fingerprint = p_fingerprint, r.outcome, r.account_id, r.currency, r.created_at
      FROM ledger_open_account(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
                               p_currency, p_events) r
$$;

CREATE FUNCTION ledger_post_transaction_checked(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_events boolean)
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
               entry_id uuid, account_id uuid, type text, amount bigint, sequence bigint,
               reference text, balance_after bigint, created_at timestamptz,
               balance bigint, last_sequence bigint)
LANGUAGE sql AS $$
    SELECT r.replayed, r.fingerprint = p_fingerprint, r.outcome, r.entry_id, r.account_id, r.type, r.amount,
           r.sequence, r.reference, r.balance_after, r.created_at, r.balance, r.last_sequence
      FROM ledger_post_transaction(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
                                   p_entry_id, p_type, p_amount, p_sequence, p_reference, p_events) r
$$;

-- V1's signatures, kept by V2 for the instances of V1's version: none runs beside this one.
DROP FUNCTION ledger_open_account(text, bytea, bytea, timestamptz, uuid, text);
DROP FUNCTION ledger_post_transaction(text, bytea, bytea, timestamptz, uuid, uuid, text, bigint, bigint, text);
