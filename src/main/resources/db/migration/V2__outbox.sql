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
-- The relay's work in order, and the check that an event is the oldest unpublished of its account.
CREATE INDEX outbox_events_unpublished_idx ON outbox_events (position) WHERE published_at IS NULL;
CREATE INDEX outbox_events_unpublished_account_idx ON outbox_events (account_id, position)
    WHERE published_at IS NULL;

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
