-- Traces into events (issue 26; docs/operations.md, "Traces"): an event keeps the W3C traceparent of the
-- request or command that produced it, and the relay publishes it with that trace, so that one trace
-- runs from the caller through the payment to the event its consumers read.
--
-- The payment functions keep their signatures: the _checked wrappers get an overload with the trace, which
-- sets it for its transaction only (set_config(..., true)); the event writer reads it. Instances of the
-- previous version call the old overloads and write events without a trace, as before.

ALTER TABLE outbox_events ADD COLUMN trace_parent text;

CREATE OR REPLACE FUNCTION ledger_write_event(p_type text, p_account_id uuid, p_entry_id uuid, p_destinations text[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_position bigint;
BEGIN
    -- '' once a transaction that set it has ended on this session; NULL where none ever did
    INSERT INTO outbox_events (type, account_id, entry_id, undelivered, trace_parent)
    VALUES (p_type, p_account_id, p_entry_id, cardinality(p_destinations),
            nullif(current_setting('ledger.trace_parent', true), ''))
    RETURNING position INTO v_position;
    INSERT INTO outbox_deliveries (destination, position, account_id)
    SELECT d, v_position, p_account_id FROM unnest(p_destinations) d;
END
$$;

CREATE FUNCTION ledger_open_account_checked(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_currency text, p_destinations text[], p_trace_parent text)
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
               account_id uuid, currency text, created_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
    IF p_trace_parent IS NOT NULL THEN
        PERFORM set_config('ledger.trace_parent', p_trace_parent, true);
    END IF;
    RETURN QUERY
    SELECT r.replayed, r.fingerprint = p_fingerprint, r.outcome, r.account_id, r.currency, r.created_at
      FROM ledger_open_account_core(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
                                    p_currency, p_destinations) r;
END
$$;

CREATE FUNCTION ledger_post_transaction_checked(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_destinations text[], p_trace_parent text)
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
               entry_id uuid, account_id uuid, type text, amount bigint, sequence bigint,
               reference text, balance_after bigint, created_at timestamptz,
               balance bigint, last_sequence bigint)
LANGUAGE plpgsql AS $$
BEGIN
    IF p_trace_parent IS NOT NULL THEN
        PERFORM set_config('ledger.trace_parent', p_trace_parent, true);
    END IF;
    RETURN QUERY
    SELECT r.replayed, r.fingerprint = p_fingerprint, r.outcome, r.entry_id, r.account_id, r.type, r.amount,
           r.sequence, r.reference, r.balance_after, r.created_at, r.balance, r.last_sequence
      FROM ledger_post_transaction_core(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
                                        p_entry_id, p_type, p_amount, p_sequence, p_reference, p_destinations) r;
END
$$;

-- V4's claim with each event's trace. V4's stays for the previous version's relays.
CREATE FUNCTION ledger_claim_traced_deliveries(p_destination text, p_batch integer, p_window integer)
RETURNS TABLE ("position" bigint, event_id uuid, event_type text, occurred_at timestamptz, owner text,
               account_id uuid, currency text, account_created_at timestamptz,
               entry_id uuid, type text, amount bigint, sequence bigint, reference text,
               balance_after bigint, created_at timestamptz, trace_parent text)
LANGUAGE sql
SET enable_bitmapscan = off
SET enable_seqscan = off
AS $$
    WITH pending AS MATERIALIZED (
        SELECT d.position, d.account_id FROM outbox_deliveries d
         WHERE d.destination = p_destination ORDER BY d.position LIMIT p_window),
    heads AS MATERIALIZED (
        SELECT d.account_id FROM outbox_deliveries d
         WHERE d.destination = p_destination
           AND d.position IN (SELECT min(p.position) FROM pending p GROUP BY p.account_id)
         ORDER BY d.position LIMIT p_batch
           FOR UPDATE OF d SKIP LOCKED),
    batch AS MATERIALIZED (
        SELECT p.position FROM pending p JOIN heads h ON h.account_id = p.account_id
         ORDER BY p.position LIMIT p_batch)
    SELECT o.position, o.event_id, o.type, o.created_at,
           a.owner, a.id, a.currency::text, a.created_at,
           e.id, e.type, e.amount, e.sequence, e.reference::text, e.balance_after, e.created_at,
           o.trace_parent
      FROM batch b
      JOIN outbox_events o ON o.position = b.position
      JOIN accounts a ON a.id = o.account_id
      LEFT JOIN ledger_entries e ON e.id = o.entry_id
     ORDER BY b.position
$$;
