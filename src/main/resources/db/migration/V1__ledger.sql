-- The ledger's invariants live in the database itself, not only in the application.

CREATE TABLE accounts (
    id            uuid        PRIMARY KEY,
    -- the client (API tenant) that opened the account; every query filters on it
    owner         text        NOT NULL,
    currency      char(3)     NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    balance       bigint      NOT NULL DEFAULT 0 CHECK (balance >= 0),
    last_sequence bigint      NOT NULL DEFAULT 0 CHECK (last_sequence >= 0),
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ledger_entries (
    id            uuid        PRIMARY KEY,
    account_id    uuid        NOT NULL REFERENCES accounts (id),
    type          text        NOT NULL CHECK (type IN ('DEBIT', 'CREDIT')),
    amount        bigint      NOT NULL CHECK (amount BETWEEN 1 AND 1000000000000000),
    sequence      bigint      NOT NULL CHECK (sequence >= 1),
    reference     varchar(255),
    balance_after bigint      NOT NULL CHECK (balance_after >= 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- also the index behind paging by sequence
    CONSTRAINT ledger_entries_account_sequence_key UNIQUE (account_id, sequence)
);

-- The durable half of idempotency: one row per (client, key), whatever the outcome.
-- A single table for every outcome is what makes "one key, one answer" hold: the primary key
-- serialises concurrent requests with the same key even when Redis has forgotten it.
-- The answer is kept as the data it is rendered from (outcome, the resource it created and the
-- numbers a problem reports); resource rows are immutable, so a replay renders the same bytes.
CREATE TABLE idempotency_records (
    client        text        NOT NULL,
    -- SHA-256 of client and key: raw keys are never stored
    key_hash      bytea       NOT NULL,
    -- SHA-256 of method, path and canonical JSON body
    fingerprint   bytea       NOT NULL,
    -- OPENED, APPLIED, ACCOUNT_NOT_FOUND, STALE_SEQUENCE, INSUFFICIENT_FUNDS, BALANCE_LIMIT_EXCEEDED
    outcome       text        NOT NULL,
    resource_id   uuid,
    balance       bigint,
    last_sequence bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (client, key_hash)
);
CREATE INDEX idempotency_records_expires_at_idx ON idempotency_records (expires_at);

-- Opens an account under an idempotency key, in one statement (one round trip, one transaction).
-- replayed = true: the key was already used; the stored answer (and its fingerprint) is returned.
CREATE FUNCTION ledger_open_account(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_currency text)
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

    RETURN QUERY
        INSERT INTO accounts AS a (id, owner, currency) VALUES (p_account_id, p_client, p_currency)
        RETURNING false, p_fingerprint, 'OPENED'::text, a.id, a.currency::text, a.created_at;
END
$$;

-- Posts a debit or credit under an idempotency key, in one statement (one round trip, one
-- transaction). outcome: APPLIED, ACCOUNT_NOT_FOUND (unknown or not the client's),
-- STALE_SEQUENCE (last_sequence reported), INSUFFICIENT_FUNDS (balance reported) or
-- BALANCE_LIMIT_EXCEEDED (a credit past the bigint range). replayed = true: a stored answer.
CREATE FUNCTION ledger_post_transaction(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text)
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
