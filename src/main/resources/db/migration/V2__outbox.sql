-- Events out: the transactional outbox (docs/design.md, "Events out"). An event row is written by
-- the same function call, and so the same transaction, as the change it reports; a relay on every
-- instance publishes it later and marks it published.

CREATE TABLE outbox_events (
    -- The order events are published in. Per account it is the order the changes committed: the
    -- functions take it after the account's row is locked (or created), so a later change of the
    -- same account waits for this commit before it can take a larger one.
    position     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- stable across re-publication: consumers deduplicate by it
    event_id     uuid        NOT NULL DEFAULT gen_random_uuid(),
    type         text        NOT NULL CHECK (type IN ('transaction.applied', 'account.opened')),
    account_id   uuid        NOT NULL,
    -- the ledger entry of a transaction.applied, NULL for account.opened; the body is rendered from
    -- these immutable rows when the event is published, as a replay renders its answer
    entry_id     uuid,
    created_at   timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz
);
-- The relay's work, oldest first.
CREATE INDEX outbox_events_unpublished_idx ON outbox_events (position) WHERE published_at IS NULL;
-- The purge's: published events by age. Without it, a purge that finds nothing old enough reads the
-- whole table (which holds the retention's worth of events). The request path's insert never
-- touches it (a new row is unpublished); the relay's mark adds the entry.
CREATE INDEX outbox_events_published_idx ON outbox_events (published_at) WHERE published_at IS NOT NULL;

-- The relay's claim (dev.ledger.events.OutboxRepository), keeping each account's order with several
-- relays at work: only the oldest unpublished event of an account (its head) is ever locked, SKIP
-- LOCKED. The relay holding it owns the account's events until it commits: the account's next event
-- is not a head while this one is unpublished, so no other relay can take it. Heads are looked for
-- among the oldest p_window unpublished events (which hold every earlier unpublished event of each
-- account they hold one of); the batch is those accounts' events in that window, in position order.
-- Always planned as an ordered scan of the index: the statistics of a table that is nearly always
-- published otherwise lead the planner to read and sort the whole backlog on every claim, which made
-- draining a backlog slower the larger it was.
CREATE FUNCTION ledger_claim_events(p_batch integer, p_window integer)
RETURNS TABLE ("position" bigint, event_id uuid, event_type text, occurred_at timestamptz, owner text,
               account_id uuid, currency text, account_created_at timestamptz,
               entry_id uuid, type text, amount bigint, sequence bigint, reference text,
               balance_after bigint, created_at timestamptz)
LANGUAGE sql
SET enable_bitmapscan = off
SET enable_seqscan = off
AS $$
    WITH pending AS MATERIALIZED (
        SELECT o.position, o.account_id FROM outbox_events o
         WHERE o.published_at IS NULL ORDER BY o.position LIMIT p_window),
    heads AS MATERIALIZED (
        SELECT o.account_id FROM outbox_events o
         WHERE o.position IN (SELECT min(p.position) FROM pending p GROUP BY p.account_id)
           AND o.published_at IS NULL
         ORDER BY o.position LIMIT p_batch
           FOR UPDATE OF o SKIP LOCKED),
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

-- p_events: write the event too (ledger.events.* switched on). No NOTIFY here: PostgreSQL
-- serialises the commits of notifying transactions (a lock held from pre-commit to the end of the
-- commit), which cost the payment statement most of its rate; the instance that wrote the event
-- wakes its own relay instead (docs/design.md).
DROP FUNCTION ledger_open_account(text, bytea, bytea, timestamptz, uuid, text);
CREATE FUNCTION ledger_open_account(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_currency text, p_events boolean)
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

    IF p_events THEN
        INSERT INTO outbox_events (type, account_id) VALUES ('account.opened', p_account_id);
    END IF;
    RETURN QUERY
        INSERT INTO accounts AS a (id, owner, currency) VALUES (p_account_id, p_client, p_currency)
        RETURNING false, p_fingerprint, 'OPENED'::text, a.id, a.currency::text, a.created_at;
END
$$;

DROP FUNCTION ledger_post_transaction(text, bytea, bytea, timestamptz, uuid, uuid, text, bigint, bigint, text);
CREATE FUNCTION ledger_post_transaction(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_events boolean)
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
            IF p_events THEN
                INSERT INTO outbox_events (type, account_id, entry_id)
                VALUES ('transaction.applied', p_account_id, p_entry_id);
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

-- The signatures of V1, for instances of the previous version during a rolling upgrade: they
-- write no events.
CREATE FUNCTION ledger_open_account(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_currency text)
RETURNS TABLE (replayed boolean, fingerprint bytea, outcome text,
               account_id uuid, currency text, created_at timestamptz)
LANGUAGE sql AS $$
    SELECT * FROM ledger_open_account(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
                                      p_currency, false)
$$;

CREATE FUNCTION ledger_post_transaction(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text)
RETURNS TABLE (replayed boolean, fingerprint bytea, outcome text,
               entry_id uuid, account_id uuid, type text, amount bigint, sequence bigint,
               reference text, balance_after bigint, created_at timestamptz,
               balance bigint, last_sequence bigint)
LANGUAGE sql AS $$
    SELECT * FROM ledger_post_transaction(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id,
                                          p_entry_id, p_type, p_amount, p_sequence, p_reference, false)
$$;
