-- Events to two brokers, each tracked on its own (issue 25; docs/design.md, "Events out"): RabbitMQ and
-- Kafka may both be switched on, and one of them down delays only its own events.
--
-- An event's pending publication to one broker is a row of outbox_deliveries. A relay per broker claims
-- and locks its own rows, so that a relay waiting on its broker's confirms, or failing, holds nothing the
-- other broker's relay needs; outbox_events rows are locked only for an instant, by the marks.
-- outbox_events.undelivered counts the brokers still to publish an event: the mark that takes it to 0
-- sets published_at, which the purge and its index go by as before.
--
-- Rolling upgrade: instances of the previous version write events through V2's functions (p_events),
-- which now delegate to the ones below with RabbitMQ as the only broker, as they meant. Their relay
-- still claims with ledger_claim_events and marks published_at directly: while both versions run, an
-- event can be published to RabbitMQ twice, with the same eventId.

CREATE TABLE outbox_deliveries (
    destination text   NOT NULL CHECK (destination IN ('rabbitmq', 'kafka')),
    position    bigint NOT NULL,
    -- the claim keeps each account's order per broker: see ledger_claim_deliveries
    account_id  uuid   NOT NULL,
    PRIMARY KEY (destination, position)
);

-- Existing events: 1 broker to go (RabbitMQ) while unpublished. For published ones the count is never
-- read again (a fast default: no rewrite of the table).
ALTER TABLE outbox_events ADD COLUMN undelivered smallint NOT NULL DEFAULT 1;
INSERT INTO outbox_deliveries (destination, position, account_id)
SELECT 'rabbitmq', position, account_id FROM outbox_events WHERE published_at IS NULL;

-- This version's relays read outbox_deliveries. outbox_events_unpublished_idx and ledger_claim_events stay
-- for the previous version's relays; a later migration drops them.

-- Writes an event and a delivery of it for each broker in p_destinations (never empty: the callers skip
-- the call when no broker is on). plpgsql, so that its two statements keep their plans across calls.
CREATE FUNCTION ledger_write_event(p_type text, p_account_id uuid, p_entry_id uuid, p_destinations text[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_position bigint;
BEGIN
    INSERT INTO outbox_events (type, account_id, entry_id, undelivered)
    VALUES (p_type, p_account_id, p_entry_id, cardinality(p_destinations))
    RETURNING position INTO v_position;
    INSERT INTO outbox_deliveries (destination, position, account_id)
    SELECT d, v_position, p_account_id FROM unnest(p_destinations) d;
END
$$;

-- V2's functions with the brokers named instead of a flag; V2's own signatures delegate to them.
CREATE FUNCTION ledger_open_account_core(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_currency text, p_destinations text[])
RETURNS TABLE (replayed boolean, fingerprint bytea, outcome text,
               account_id uuid, currency text, created_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    -- Record first: a concurrent duplicate waits here on the key, then sees it committed.
    INSERT INTO idempotency_records (client, key_hash, fingerprint, outcome, resource_id, expires_at)
    VALUES (p_client, p_key_hash, p_fingerprint, 'OPENED', p_account_id, p_expires_at)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN QUERY
            SELECT true, r.fingerprint, r.outcome, a.id, a.currency::text, a.created_at
            FROM idempotency_records r LEFT JOIN accounts a ON a.id = r.resource_id
            WHERE r.client = p_client AND r.key_hash = p_key_hash;
        RETURN;
    END IF;

    IF cardinality(p_destinations) > 0 THEN
        PERFORM ledger_write_event('account.opened', p_account_id, NULL, p_destinations);
    END IF;
    RETURN QUERY
        INSERT INTO accounts AS a (id, owner, currency) VALUES (p_account_id, p_client, p_currency)
        RETURNING false, p_fingerprint, 'OPENED'::text, a.id, a.currency::text, a.created_at;
END
$$;

CREATE FUNCTION ledger_post_transaction_core(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_destinations text[])
RETURNS TABLE (replayed boolean, fingerprint bytea, outcome text,
               entry_id uuid, account_id uuid, type text, amount bigint, sequence bigint,
               reference text, balance_after bigint, created_at timestamptz,
               balance bigint, last_sequence bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_delta   bigint := CASE p_type WHEN 'CREDIT' THEN p_amount ELSE -p_amount END;
    v_balance bigint;
    v_last    bigint;
    v_outcome text;
BEGIN
    -- Record first, optimistically as the APPLIED it nearly always is; corrected below otherwise.
    INSERT INTO idempotency_records (client, key_hash, fingerprint, outcome, resource_id, expires_at)
    VALUES (p_client, p_key_hash, p_fingerprint, 'APPLIED', p_entry_id, p_expires_at)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN QUERY
            SELECT true, r.fingerprint, r.outcome,
                   e.id, e.account_id, e.type, e.amount, e.sequence, e.reference::text,
                   e.balance_after, e.created_at, r.balance, r.last_sequence
            FROM idempotency_records r
            LEFT JOIN ledger_entries e ON e.id = r.resource_id
            WHERE r.client = p_client AND r.key_hash = p_key_hash;
        RETURN;
    END IF;

    LOOP
        -- The sequence-checked update: the only way a balance changes. numeric: no overflow error.
        UPDATE accounts a
           SET balance = a.balance + v_delta, last_sequence = p_sequence
         WHERE a.id = p_account_id AND a.owner = p_client
           AND a.last_sequence < p_sequence
           AND a.balance::numeric + v_delta BETWEEN 0 AND 9223372036854775807
        RETURNING a.balance INTO v_balance;
        IF FOUND THEN
            -- After the UPDATE, which holds the account's row lock until commit: see position.
            IF cardinality(p_destinations) > 0 THEN
                PERFORM ledger_write_event('transaction.applied', p_account_id, p_entry_id, p_destinations);
            END IF;
            RETURN QUERY
                INSERT INTO ledger_entries AS e
                    (id, account_id, type, amount, sequence, reference, balance_after)
                VALUES (p_entry_id, p_account_id, p_type, p_amount, p_sequence, p_reference, v_balance)
                RETURNING false, p_fingerprint, 'APPLIED'::text,
                          e.id, e.account_id, e.type, e.amount, e.sequence, e.reference::text,
                          e.balance_after, e.created_at, v_balance, p_sequence;
            RETURN;
        END IF;

        -- Not applied: tell why from the latest committed row (a locking read sees it even when
        -- the UPDATE above waited on a concurrent writer). The sequence check wins over funds.
        SELECT a.balance, a.last_sequence INTO v_balance, v_last
          FROM accounts a WHERE a.id = p_account_id AND a.owner = p_client FOR SHARE;
        IF NOT FOUND THEN
            v_outcome := 'ACCOUNT_NOT_FOUND';
        ELSIF v_last >= p_sequence THEN
            v_outcome := 'STALE_SEQUENCE';
        ELSIF v_balance::numeric + v_delta < 0 THEN
            v_outcome := 'INSUFFICIENT_FUNDS';
        ELSIF v_balance::numeric + v_delta > 9223372036854775807 THEN
            v_outcome := 'BALANCE_LIMIT_EXCEEDED';
        END IF;
        -- Still NULL: the row changed between the two statements; evaluate again.
        EXIT WHEN v_outcome IS NOT NULL;
    END LOOP;

    UPDATE idempotency_records r
       SET outcome = v_outcome, resource_id = NULL, balance = v_balance, last_sequence = v_last
     WHERE r.client = p_client AND r.key_hash = p_key_hash;
    RETURN QUERY
        SELECT false, p_fingerprint, v_outcome, NULL::uuid, NULL::uuid, NULL::text, NULL::bigint,
               NULL::bigint, NULL::text, NULL::bigint, NULL::timestamptz, v_balance, v_last;
END
$$;

-- V2's signatures, for the previous version's instances: p_events meant RabbitMQ. Same result types, so
-- their prepared statements keep working.
CREATE OR REPLACE FUNCTION ledger_open_account(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_currency text, p_events boolean)
RETURNS TABLE (replayed boolean, fingerprint bytea, outcome text,
               account_id uuid, currency text, created_at timestamptz)
LANGUAGE sql AS $$
    SELECT * FROM ledger_open_account_core(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
        p_currency, CASE WHEN p_events THEN ARRAY['rabbitmq'] ELSE ARRAY[]::text[] END)
$$;

CREATE OR REPLACE FUNCTION ledger_post_transaction(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_events boolean)
RETURNS TABLE (replayed boolean, fingerprint bytea, outcome text,
               entry_id uuid, account_id uuid, type text, amount bigint, sequence bigint,
               reference text, balance_after bigint, created_at timestamptz,
               balance bigint, last_sequence bigint)
LANGUAGE sql AS $$
    SELECT * FROM ledger_post_transaction_core(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
        p_entry_id, p_type, p_amount, p_sequence, p_reference,
        CASE WHEN p_events THEN ARRAY['rabbitmq'] ELSE ARRAY[]::text[] END)
$$;

-- What this version calls: V3's same_request wrappers, with the brokers named. (V3's boolean ones had
-- no caller outside this version.) plpgsql, not sql: a sql function that calls a set-returning plpgsql
-- one is planned again at every call, which cost the payment statement a quarter of its rate.
DROP FUNCTION ledger_open_account_checked(text, bytea, bytea, timestamptz, uuid, text, boolean);
CREATE FUNCTION ledger_open_account_checked(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_currency text, p_destinations text[])
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
               account_id uuid, currency text, created_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    SELECT r.replayed, r.fingerprint = p_fingerprint, r.outcome, r.account_id, r.currency, r.created_at
      FROM ledger_open_account_core(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
                                    p_currency, p_destinations) r;
END
$$;

DROP FUNCTION ledger_post_transaction_checked(text, bytea, bytea, timestamptz, uuid, uuid, text, bigint, bigint,
                                              text, boolean);
CREATE FUNCTION ledger_post_transaction_checked(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_destinations text[])
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
               entry_id uuid, account_id uuid, type text, amount bigint, sequence bigint,
               reference text, balance_after bigint, created_at timestamptz,
               balance bigint, last_sequence bigint)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    SELECT r.replayed, r.fingerprint = p_fingerprint, r.outcome, r.entry_id, r.account_id, r.type, r.amount,
           r.sequence, r.reference, r.balance_after, r.created_at, r.balance, r.last_sequence
      FROM ledger_post_transaction_core(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
                                        p_entry_id, p_type, p_amount, p_sequence, p_reference, p_destinations) r;
END
$$;

-- One broker's claim: ledger_claim_events (V2) over that broker's rows of outbox_deliveries. Only the
-- oldest pending delivery of an account (its head) is ever locked, SKIP LOCKED; the relay holding it owns
-- the account's deliveries to that broker until it commits. Heads are looked for among the broker's oldest
-- p_window pending deliveries; the batch is those accounts' deliveries in that window, in position order.
-- An ordered scan of the primary key, as in V2 and for the same reason.
CREATE FUNCTION ledger_claim_deliveries(p_destination text, p_batch integer, p_window integer)
RETURNS TABLE ("position" bigint, event_id uuid, event_type text, occurred_at timestamptz, owner text,
               account_id uuid, currency text, account_created_at timestamptz,
               entry_id uuid, type text, amount bigint, sequence bigint, reference text,
               balance_after bigint, created_at timestamptz)
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
           e.id, e.type, e.amount, e.sequence, e.reference::text, e.balance_after, e.created_at
      FROM batch b
      JOIN outbox_events o ON o.position = b.position
      JOIN accounts a ON a.id = o.account_id
      LEFT JOIN ledger_entries e ON e.id = o.entry_id
     ORDER BY b.position
$$;

-- One broker's mark: its deliveries go, and an event none is left for is published (published_at set).
-- Two brokers' marks of one event take its row one after the other, and the second sees the first's count.
CREATE FUNCTION ledger_mark_delivered(p_destination text, p_positions bigint[])
RETURNS void
LANGUAGE sql AS $$
    WITH delivered AS (
        DELETE FROM outbox_deliveries d
         WHERE d.destination = p_destination AND d.position = ANY (p_positions)
        RETURNING d.position)
    UPDATE outbox_events o
       SET undelivered = o.undelivered - 1,
           published_at = CASE WHEN o.undelivered = 1 THEN now() END
      FROM delivered d
     WHERE o.position = d.position
$$;
