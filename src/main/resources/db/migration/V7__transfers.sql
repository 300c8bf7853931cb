-- Transfers, holds and reversals (issue 38; docs/design.md, "A transfer, followed through the code"): one more
-- kind of request through the same engine. Each POST is one call of one function below, so one round trip and
-- one transaction: the idempotency record first, then both accounts locked in one order, the checks, both
-- legs (or a hold's pending amounts), the transfer and one event per account; or the refusal, recorded.
--
-- Locks, the same order in every function, so that no two of them wait for each other in a circle:
--   1. a transfer's row first, when the request names an existing transfer (FOR NO KEY UPDATE);
--   2. then the accounts, in ascending id (FOR NO KEY UPDATE), never one after another of a lower id.
-- A debit or credit (ledger_post_transaction_core) locks its one account; the expiry job takes its holds'
-- rows with SKIP LOCKED (it waits for none) and then their accounts in id order.
--
-- Time: a hold expires at expires_at. Every function decides by now(), the start of its transaction (the
-- moment PostgreSQL took the request; created_at of what it writes is the same instant), so a post at
-- expires_at is transfer-expired whether or not the expiry job has released the hold yet, and available
-- counts a hold past its expiry as released. Every such decision is taken after the accounts' locks, by a
-- statement of its own: its snapshot then sees every change committed before the locks were granted.
--
-- Answers replay byte for byte: an answer and an event show a transfer at the moment of their change, and
-- that moment's view is a function of the transfer's immutable columns and the kind of change (the outcome
-- recorded, the event's type): created (pending, or posted in full), posted (posted_amount, set once), voided,
-- expired; reversed_amount is 0 in all of them (a transfer is reversed only after every one of those).
-- Only GET /transfers/{id} shows the row as it is now.
--
-- Rolling upgrade: instances of the previous version keep calling V5's functions. Their debits now respect
-- holds too (ledger_post_transaction_core checks available), and what they record renders as they rendered
-- it: a record without available, or an open without it, replays without the members holds brought.

-- What an account's holds take and bring: the holds not yet released, including those past their expiry that
-- the expiry job has not released yet (the functions and GET /accounts/{id} subtract those by time).
ALTER TABLE accounts
    ADD COLUMN pending_debits  bigint NOT NULL DEFAULT 0 CHECK (pending_debits >= 0),
    ADD COLUMN pending_credits bigint NOT NULL DEFAULT 0 CHECK (pending_credits >= 0);

CREATE TABLE transfers (
    id                uuid        PRIMARY KEY,
    -- the client; both accounts are its own
    owner             text        NOT NULL,
    debit_account_id  uuid        NOT NULL REFERENCES accounts (id),
    credit_account_id uuid        NOT NULL REFERENCES accounts (id),
    -- both accounts'
    currency          char(3)     NOT NULL,
    amount            bigint      NOT NULL CHECK (amount BETWEEN 1 AND 1000000000000000),
    reference         varchar(255),
    status            text        NOT NULL CHECK (status IN ('pending', 'posted', 'voided', 'expired')),
    -- what moved; set once, when the transfer is made posted or its hold is posted
    posted_amount     bigint      NOT NULL CHECK (posted_amount BETWEEN 0 AND amount),
    reversed_amount   bigint      NOT NULL DEFAULT 0 CHECK (reversed_amount BETWEEN 0 AND posted_amount),
    reversal_of       uuid        REFERENCES transfers (id),
    -- a hold's expiry; NULL for a transfer made posted (a reversal included)
    expires_at        timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CHECK (debit_account_id <> credit_account_id),
    CHECK (status <> 'pending' OR expires_at IS NOT NULL)
);
-- The live holds of an account (what the by-time sums read) and by expiry (the expiry job's): only holds
-- still pending are in them, so they stay small whatever the table holds.
CREATE INDEX transfers_pending_debit_idx ON transfers (debit_account_id, expires_at) WHERE status = 'pending';
CREATE INDEX transfers_pending_credit_idx ON transfers (credit_account_id, expires_at) WHERE status = 'pending';
CREATE INDEX transfers_pending_expiry_idx ON transfers (expires_at) WHERE status = 'pending';

-- A transfer's legs: entries as any other, with the transfer they belong to (the same statement writes both).
ALTER TABLE ledger_entries ADD COLUMN transfer_id uuid;

-- The numbers the transfers' refusals report: which account (account_id), its available balance, and the
-- amount that was left (a hold's, for amount-exceeds-pending; what was left to reverse, for
-- reversal-exceeds-transfer). available is NULL on every record written before this version.
ALTER TABLE idempotency_records
    ADD COLUMN account_id  uuid,
    ADD COLUMN available   bigint,
    ADD COLUMN amount_left bigint;

-- Transfer events: one per account the change concerns, naming the transfer.
ALTER TABLE outbox_events ADD COLUMN transfer_id uuid;
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_type_check;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_type_check CHECK (type IN ('transaction.applied', 'account.opened',
    'transfer.pending', 'transfer.posted', 'transfer.voided', 'transfer.expired'));

-- What an account's live holds take: pending_debits less the holds past their expiry not yet released. The
-- callers skip it when pending_debits is 0 (every account without holds).
CREATE FUNCTION ledger_live_pending_debits(p_account uuid, p_pending bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN p_pending - coalesce((SELECT sum(t.amount) FROM transfers t
                                  WHERE t.debit_account_id = p_account AND t.status = 'pending' AND t.expires_at <= now()), 0);
END
$$;

CREATE FUNCTION ledger_live_pending_credits(p_account uuid, p_pending bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN p_pending - coalesce((SELECT sum(t.amount) FROM transfers t
                                  WHERE t.credit_account_id = p_account AND t.status = 'pending' AND t.expires_at <= now()), 0);
END
$$;

-- What the transfer functions answer: the outcome, the transfer (of a success), the numbers of a refusal, and
-- the record's expiry (what every _checked function of V6 returns as expires_at).
CREATE TYPE ledger_transfer_outcome AS (
    replayed            boolean,
    same_request        boolean,
    outcome             text,
    transfer_id         uuid,
    debit_account_id    uuid,
    credit_account_id   uuid,
    transfer_amount     bigint,
    currency            text,
    transfer_reference  text,
    posted_amount       bigint,
    reversal_of         uuid,
    transfer_expires_at timestamptz,
    transfer_created_at timestamptz,
    account_id          uuid,
    balance             bigint,
    available           bigint,
    last_sequence       bigint,
    amount_left         bigint,
    -- the record's (V6): the one just inserted, or the one replayed
    expires_at          timestamptz
);

-- A transfer request's record, inserted first, as the success it nearly always is (p_outcome, p_resource_id),
-- with the request's path; the trace set for the transaction. false: the key was used before (Redis forgot
-- it, or was skipped), and the caller answers what it holds (ledger_transfer_replay); a concurrent duplicate
-- waits here on the key, then sees it committed.
CREATE FUNCTION ledger_record_transfer_request(p_client text, p_key_hash bytea, p_fingerprint bytea,
                                               p_expires_at timestamptz, p_request_path text, p_outcome text,
                                               p_resource_id uuid, p_trace_parent text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM ledger_set_request(p_trace_parent, NULL);
    INSERT INTO idempotency_records (client, key_hash, fingerprint, outcome, resource_id, expires_at, request_path)
    VALUES (p_client, p_key_hash, p_fingerprint, p_outcome, p_resource_id, p_expires_at, p_request_path)
    ON CONFLICT DO NOTHING;
    RETURN FOUND;
END
$$;

-- The answer a key already holds (Redis forgot it, or was skipped), and whether it is this request's.
CREATE FUNCTION ledger_transfer_replay(p_client text, p_key_hash bytea, p_fingerprint bytea)
RETURNS SETOF ledger_transfer_outcome
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
        SELECT true, r.fingerprint = p_fingerprint, r.outcome, t.id, t.debit_account_id, t.credit_account_id, t.amount,
               t.currency::text, t.reference::text, t.posted_amount, t.reversal_of, t.expires_at, t.created_at,
               r.account_id, r.balance, r.available, r.last_sequence, r.amount_left, r.expires_at
          FROM idempotency_records r LEFT JOIN transfers t ON t.id = r.resource_id
         WHERE r.client = p_client AND r.key_hash = p_key_hash;
END
$$;

-- A refusal: recorded on the key's record (inserted first by the caller as the success it nearly always is),
-- with the numbers its problem reports, and answered.
CREATE FUNCTION ledger_transfer_refused(p_client text, p_key_hash bytea, p_expires_at timestamptz, p_outcome text,
                                        p_account_id uuid, p_balance bigint, p_available bigint, p_last_sequence bigint,
                                        p_amount_left bigint)
RETURNS SETOF ledger_transfer_outcome
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE idempotency_records r
       SET outcome = p_outcome, resource_id = NULL, account_id = p_account_id, balance = p_balance,
           available = p_available, last_sequence = p_last_sequence, amount_left = p_amount_left
     WHERE r.client = p_client AND r.key_hash = p_key_hash;
    RETURN QUERY
        SELECT false, true, p_outcome, NULL::uuid, NULL::uuid, NULL::uuid, NULL::bigint, NULL::text, NULL::text,
               NULL::bigint, NULL::uuid, NULL::timestamptz, NULL::timestamptz,
               p_account_id, p_balance, p_available, p_last_sequence, p_amount_left, p_expires_at;
END
$$;

-- A transfer's answer: the row as this transaction left it (the caller renders it at the outcome's moment).
CREATE FUNCTION ledger_transfer_answer(p_outcome text, p_transfer_id uuid, p_expires_at timestamptz)
RETURNS SETOF ledger_transfer_outcome
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
        SELECT false, true, p_outcome, t.id, t.debit_account_id, t.credit_account_id, t.amount, t.currency::text,
               t.reference::text, t.posted_amount, t.reversal_of, t.expires_at, t.created_at,
               NULL::uuid, NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, p_expires_at
          FROM transfers t WHERE t.id = p_transfer_id;
END
$$;

-- One event per account of a transfer's change, each in its account's stream, with a delivery per broker. The
-- accounts are locked by the caller, so the positions follow each account's commit order (V2).
CREATE FUNCTION ledger_write_transfer_events(p_type text, p_transfer_id uuid, p_debit uuid, p_credit uuid,
                                             p_destinations text[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(p_destinations) = 0 THEN
        RETURN;
    END IF;
    WITH events AS (
        INSERT INTO outbox_events (type, account_id, transfer_id, undelivered, trace_parent)
        SELECT p_type, a, p_transfer_id, cardinality(p_destinations), nullif(current_setting('ledger.trace_parent', true), '')
          FROM unnest(ARRAY[p_debit, p_credit]) a
        RETURNING position, account_id)
    INSERT INTO outbox_deliveries (destination, position, account_id)
    SELECT d, e.position, e.account_id FROM events e CROSS JOIN unnest(p_destinations) d;
END
$$;

-- Releases a hold whose row and accounts the caller has locked: its amount leaves both pending amounts, it
-- becomes p_status (voided or expired), and each account gets its event.
CREATE FUNCTION ledger_release_hold(p_hold transfers, p_status text, p_destinations text[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE accounts a
       SET pending_debits = a.pending_debits - CASE WHEN a.id = p_hold.debit_account_id THEN p_hold.amount ELSE 0 END,
           pending_credits = a.pending_credits - CASE WHEN a.id = p_hold.credit_account_id THEN p_hold.amount ELSE 0 END
     WHERE a.id IN (p_hold.debit_account_id, p_hold.credit_account_id);
    UPDATE transfers t SET status = p_status WHERE t.id = p_hold.id;
    PERFORM ledger_write_transfer_events('transfer.' || p_status, p_hold.id, p_hold.debit_account_id,
                                         p_hold.credit_account_id, p_destinations);
END
$$;

-- Locks two accounts of the client in ascending id, the order every function takes them in, and answers them
-- as (the first, the second) of the arguments; an account that is unknown or another client's is NULL.
CREATE FUNCTION ledger_lock_accounts(p_client text, p_first uuid, p_second uuid, OUT first_account accounts,
                                     OUT second_account accounts)
LANGUAGE plpgsql AS $$
DECLARE
    v_low  accounts;
    v_high accounts;
BEGIN
    SELECT * INTO v_low FROM accounts a WHERE a.id = least(p_first, p_second) AND a.owner = p_client FOR NO KEY UPDATE;
    SELECT * INTO v_high FROM accounts a WHERE a.id = greatest(p_first, p_second) AND a.owner = p_client FOR NO KEY UPDATE;
    IF p_first < p_second THEN
        first_account := v_low;
        second_account := v_high;
    ELSE
        first_account := v_high;
        second_account := v_low;
    END IF;
END
$$;

-- Moves p_amount from p_debit to p_credit, the caller holding both accounts' locks and having checked every
-- rule: both balances and last_sequences in one UPDATE, each leg an entry of the transfer (its balance_after the
-- UPDATE's). p_release: a hold's amount leaving the pending amounts at the same time (its post), else 0.
CREATE FUNCTION ledger_move(p_transfer_id uuid, p_debit uuid, p_credit uuid, p_amount bigint, p_debit_sequence bigint,
                            p_credit_sequence bigint, p_reference text, p_release bigint)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    WITH moved AS (
        UPDATE accounts a
           SET balance = a.balance + CASE WHEN a.id = p_debit THEN -p_amount ELSE p_amount END,
               last_sequence = CASE WHEN a.id = p_debit THEN p_debit_sequence ELSE p_credit_sequence END,
               pending_debits = a.pending_debits - CASE WHEN a.id = p_debit THEN p_release ELSE 0 END,
               pending_credits = a.pending_credits - CASE WHEN a.id = p_credit THEN p_release ELSE 0 END
         WHERE a.id IN (p_debit, p_credit)
        RETURNING a.id, a.balance)
    INSERT INTO ledger_entries (id, account_id, type, amount, sequence, reference, balance_after, transfer_id)
    SELECT gen_random_uuid(), m.id, CASE WHEN m.id = p_debit THEN 'DEBIT' ELSE 'CREDIT' END, p_amount,
           CASE WHEN m.id = p_debit THEN p_debit_sequence ELSE p_credit_sequence END, p_reference, m.balance, p_transfer_id
      FROM moved m;
END
$$;

-- POST /transfers. p_pending: a hold of p_timeout_seconds; else posted at once, each leg an entry at
-- p_debit_sequence / p_credit_sequence (NULL: the account's last_sequence + 1). Refusals, in the contract's
-- order: ACCOUNT_NOT_FOUND (the debit account first), CURRENCY_MISMATCH, STALE_SEQUENCE (the debit leg first),
-- INSUFFICIENT_FUNDS, BALANCE_LIMIT_EXCEEDED.
CREATE FUNCTION ledger_create_transfer(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz, p_request_path text,
    p_transfer_id uuid, p_debit uuid, p_credit uuid, p_amount bigint, p_reference text, p_pending boolean,
    p_timeout_seconds integer, p_debit_sequence bigint, p_credit_sequence bigint, p_destinations text[],
    p_trace_parent text)
RETURNS SETOF ledger_transfer_outcome
LANGUAGE plpgsql AS $$
DECLARE
    v_pair      record;
    v_debit     accounts;
    v_credit    accounts;
    v_debit_seq  bigint;
    v_credit_seq bigint;
    v_available bigint;
BEGIN
    IF NOT ledger_record_transfer_request(p_client, p_key_hash, p_fingerprint, p_expires_at, p_request_path,
                                          'TRANSFER_CREATED', p_transfer_id, p_trace_parent) THEN
        RETURN QUERY SELECT * FROM ledger_transfer_replay(p_client, p_key_hash, p_fingerprint);
        RETURN;
    END IF;

    SELECT * INTO v_pair FROM ledger_lock_accounts(p_client, p_debit, p_credit);
    v_debit := v_pair.first_account;
    v_credit := v_pair.second_account;
    IF v_debit.id IS NULL OR v_credit.id IS NULL THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'ACCOUNT_NOT_FOUND',
            CASE WHEN v_debit.id IS NULL THEN p_debit ELSE p_credit END, NULL, NULL, NULL, NULL);
        RETURN;
    END IF;
    IF v_debit.currency <> v_credit.currency THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'CURRENCY_MISMATCH', NULL, NULL, NULL, NULL, NULL);
        RETURN;
    END IF;
    IF NOT p_pending THEN
        -- numeric: the sequence after 2^63-1 does not exist, and no leg can take it
        v_debit_seq := coalesce(p_debit_sequence, least(v_debit.last_sequence::numeric + 1, 9223372036854775807));
        v_credit_seq := coalesce(p_credit_sequence, least(v_credit.last_sequence::numeric + 1, 9223372036854775807));
        IF v_debit_seq <= v_debit.last_sequence THEN
            RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'STALE_SEQUENCE', p_debit, NULL, NULL,
                v_debit.last_sequence, NULL);
            RETURN;
        END IF;
        IF v_credit_seq <= v_credit.last_sequence THEN
            RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'STALE_SEQUENCE', p_credit, NULL, NULL,
                v_credit.last_sequence, NULL);
            RETURN;
        END IF;
    END IF;
    v_available := v_debit.balance;
    IF v_debit.pending_debits > 0 THEN
        v_available := v_debit.balance - ledger_live_pending_debits(p_debit, v_debit.pending_debits);
    END IF;
    IF p_amount > v_available THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'INSUFFICIENT_FUNDS', p_debit,
            v_debit.balance, v_available, NULL, NULL);
        RETURN;
    END IF;
    -- a hold counts its credit as if posted: its post then fits unless other credits came first
    IF v_credit.balance::numeric + (CASE WHEN p_pending THEN v_credit.pending_credits ELSE 0 END) + p_amount
           > 9223372036854775807 THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'BALANCE_LIMIT_EXCEEDED', p_credit,
            v_credit.balance, NULL, NULL, NULL);
        RETURN;
    END IF;

    IF p_pending THEN
        UPDATE accounts a
           SET pending_debits = a.pending_debits + CASE WHEN a.id = p_debit THEN p_amount ELSE 0 END,
               pending_credits = a.pending_credits + CASE WHEN a.id = p_credit THEN p_amount ELSE 0 END
         WHERE a.id IN (p_debit, p_credit);
        INSERT INTO transfers (id, owner, debit_account_id, credit_account_id, currency, amount, reference, status,
                               posted_amount, expires_at)
        VALUES (p_transfer_id, p_client, p_debit, p_credit, v_debit.currency, p_amount, p_reference, 'pending', 0,
                now() + make_interval(secs => p_timeout_seconds));
        PERFORM ledger_write_transfer_events('transfer.pending', p_transfer_id, p_debit, p_credit, p_destinations);
    ELSE
        PERFORM ledger_move(p_transfer_id, p_debit, p_credit, p_amount, v_debit_seq, v_credit_seq, p_reference, 0);
        INSERT INTO transfers (id, owner, debit_account_id, credit_account_id, currency, amount, reference, status,
                               posted_amount)
        VALUES (p_transfer_id, p_client, p_debit, p_credit, v_debit.currency, p_amount, p_reference, 'posted', p_amount);
        PERFORM ledger_write_transfer_events('transfer.posted', p_transfer_id, p_debit, p_credit, p_destinations);
    END IF;
    RETURN QUERY SELECT * FROM ledger_transfer_answer('TRANSFER_CREATED', p_transfer_id, p_expires_at);
END
$$;

-- A settlement's first steps, shared by post and void: the transfer's row locked (first, as every function
-- takes it), then its accounts in id order; and the refusal its state calls for, NULL while it is a live hold.
-- A hold found past its expiry is released here (it is expired by time; this is the expiry job's release,
-- done by the first statement that holds its locks), and the settlement is refused.
CREATE FUNCTION ledger_settlement_refusal(p_client text, p_transfer_id uuid, p_destinations text[],
                                          OUT hold transfers, OUT debit_account accounts, OUT credit_account accounts,
                                          OUT refusal text)
LANGUAGE plpgsql AS $$
DECLARE
    v_pair record;
BEGIN
    SELECT * INTO hold FROM transfers t WHERE t.id = p_transfer_id AND t.owner = p_client FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        refusal := 'TRANSFER_NOT_FOUND';
        RETURN;
    END IF;
    SELECT * INTO v_pair FROM ledger_lock_accounts(p_client, hold.debit_account_id, hold.credit_account_id);
    debit_account := v_pair.first_account;
    credit_account := v_pair.second_account;
    refusal := CASE
        WHEN hold.status = 'posted' AND hold.expires_at IS NULL THEN 'TRANSFER_NOT_PENDING'
        WHEN hold.status = 'posted' THEN 'TRANSFER_ALREADY_POSTED'
        WHEN hold.status = 'voided' THEN 'TRANSFER_ALREADY_VOIDED'
        WHEN hold.status = 'expired' THEN 'TRANSFER_EXPIRED'
        WHEN hold.expires_at <= now() THEN 'TRANSFER_EXPIRED'
    END;
    IF hold.status = 'pending' AND refusal = 'TRANSFER_EXPIRED' THEN
        PERFORM ledger_release_hold(hold, 'expired', p_destinations);
    END IF;
END
$$;

-- POST /transfers/{id}/post: moves p_amount (NULL: the whole hold) and releases the hold. Refusals, in the
-- contract's order: TRANSFER_NOT_FOUND, the transfer's state (TRANSFER_NOT_PENDING, TRANSFER_ALREADY_POSTED,
-- TRANSFER_ALREADY_VOIDED, TRANSFER_EXPIRED), STALE_SEQUENCE (the debit leg first), AMOUNT_EXCEEDS_PENDING,
-- BALANCE_LIMIT_EXCEEDED. A live hold never lacks funds: available kept its amount aside.
CREATE FUNCTION ledger_post_transfer(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz, p_request_path text,
    p_transfer_id uuid, p_amount bigint, p_debit_sequence bigint, p_credit_sequence bigint, p_destinations text[],
    p_trace_parent text)
RETURNS SETOF ledger_transfer_outcome
LANGUAGE plpgsql AS $$
DECLARE
    v_settle     record;
    v_hold       transfers;
    v_debit      accounts;
    v_credit     accounts;
    v_amount     bigint;
    v_debit_seq  bigint;
    v_credit_seq bigint;
BEGIN
    IF NOT ledger_record_transfer_request(p_client, p_key_hash, p_fingerprint, p_expires_at, p_request_path,
                                          'TRANSFER_POSTED', p_transfer_id, p_trace_parent) THEN
        RETURN QUERY SELECT * FROM ledger_transfer_replay(p_client, p_key_hash, p_fingerprint);
        RETURN;
    END IF;

    SELECT * INTO v_settle FROM ledger_settlement_refusal(p_client, p_transfer_id, p_destinations);
    IF v_settle.refusal IS NOT NULL THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, v_settle.refusal, NULL, NULL, NULL, NULL, NULL);
        RETURN;
    END IF;
    v_hold := v_settle.hold;
    v_debit := v_settle.debit_account;
    v_credit := v_settle.credit_account;
    v_debit_seq := coalesce(p_debit_sequence, least(v_debit.last_sequence::numeric + 1, 9223372036854775807));
    v_credit_seq := coalesce(p_credit_sequence, least(v_credit.last_sequence::numeric + 1, 9223372036854775807));
    IF v_debit_seq <= v_debit.last_sequence THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'STALE_SEQUENCE', v_debit.id, NULL, NULL,
            v_debit.last_sequence, NULL);
        RETURN;
    END IF;
    IF v_credit_seq <= v_credit.last_sequence THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'STALE_SEQUENCE', v_credit.id, NULL, NULL,
            v_credit.last_sequence, NULL);
        RETURN;
    END IF;
    v_amount := coalesce(p_amount, v_hold.amount);
    IF v_amount > v_hold.amount THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'AMOUNT_EXCEEDS_PENDING', NULL, NULL, NULL,
            NULL, v_hold.amount);
        RETURN;
    END IF;
    IF v_credit.balance::numeric + v_amount > 9223372036854775807 THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'BALANCE_LIMIT_EXCEEDED', v_credit.id,
            v_credit.balance, NULL, NULL, NULL);
        RETURN;
    END IF;

    PERFORM ledger_move(v_hold.id, v_debit.id, v_credit.id, v_amount, v_debit_seq, v_credit_seq, v_hold.reference,
                        v_hold.amount);
    UPDATE transfers t SET status = 'posted', posted_amount = v_amount WHERE t.id = v_hold.id;
    PERFORM ledger_write_transfer_events('transfer.posted', v_hold.id, v_debit.id, v_credit.id, p_destinations);
    RETURN QUERY SELECT * FROM ledger_transfer_answer('TRANSFER_POSTED', v_hold.id, p_expires_at);
END
$$;

-- POST /transfers/{id}/void: releases the whole hold. Refusals: TRANSFER_NOT_FOUND, then the transfer's state.
CREATE FUNCTION ledger_void_transfer(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz, p_request_path text,
    p_transfer_id uuid, p_destinations text[], p_trace_parent text)
RETURNS SETOF ledger_transfer_outcome
LANGUAGE plpgsql AS $$
DECLARE
    v_settle record;
BEGIN
    IF NOT ledger_record_transfer_request(p_client, p_key_hash, p_fingerprint, p_expires_at, p_request_path,
                                          'TRANSFER_VOIDED', p_transfer_id, p_trace_parent) THEN
        RETURN QUERY SELECT * FROM ledger_transfer_replay(p_client, p_key_hash, p_fingerprint);
        RETURN;
    END IF;

    SELECT * INTO v_settle FROM ledger_settlement_refusal(p_client, p_transfer_id, p_destinations);
    IF v_settle.refusal IS NOT NULL THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, v_settle.refusal, NULL, NULL, NULL, NULL, NULL);
        RETURN;
    END IF;
    PERFORM ledger_release_hold(v_settle.hold, 'voided', p_destinations);
    RETURN QUERY SELECT * FROM ledger_transfer_answer('TRANSFER_VOIDED', p_transfer_id, p_expires_at);
END
$$;

-- POST /transfers/{id}/reversals: a new posted transfer p_reversal_id of p_amount (NULL: all that is left) from
-- the original's credit account back to its debit account, the legs at each account's last_sequence + 1; the
-- original's reversed_amount grows by it. Refusals, in the contract's order: TRANSFER_NOT_FOUND,
-- TRANSFER_NOT_POSTED, STALE_SEQUENCE (an account at the last sequence there is), REVERSAL_EXCEEDS_TRANSFER,
-- INSUFFICIENT_FUNDS (the original's credit account), BALANCE_LIMIT_EXCEEDED.
CREATE FUNCTION ledger_reverse_transfer(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz, p_request_path text,
    p_transfer_id uuid, p_reversal_id uuid, p_amount bigint, p_reference text, p_destinations text[],
    p_trace_parent text)
RETURNS SETOF ledger_transfer_outcome
LANGUAGE plpgsql AS $$
DECLARE
    v_original transfers;
    v_pair     record;
    v_from     accounts;
    v_to       accounts;
    v_left     bigint;
    v_amount   bigint;
    v_available bigint;
BEGIN
    IF NOT ledger_record_transfer_request(p_client, p_key_hash, p_fingerprint, p_expires_at, p_request_path,
                                          'TRANSFER_CREATED', p_reversal_id, p_trace_parent) THEN
        RETURN QUERY SELECT * FROM ledger_transfer_replay(p_client, p_key_hash, p_fingerprint);
        RETURN;
    END IF;

    SELECT * INTO v_original FROM transfers t WHERE t.id = p_transfer_id AND t.owner = p_client FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'TRANSFER_NOT_FOUND', NULL, NULL, NULL, NULL, NULL);
        RETURN;
    END IF;
    SELECT * INTO v_pair FROM ledger_lock_accounts(p_client, v_original.credit_account_id, v_original.debit_account_id);
    v_from := v_pair.first_account;
    v_to := v_pair.second_account;
    IF v_original.status <> 'posted' THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'TRANSFER_NOT_POSTED', NULL, NULL, NULL, NULL, NULL);
        RETURN;
    END IF;
    IF v_from.last_sequence = 9223372036854775807 OR v_to.last_sequence = 9223372036854775807 THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'STALE_SEQUENCE',
            CASE WHEN v_from.last_sequence = 9223372036854775807 THEN v_from.id ELSE v_to.id END, NULL, NULL,
            9223372036854775807, NULL);
        RETURN;
    END IF;
    v_left := v_original.posted_amount - v_original.reversed_amount;
    v_amount := coalesce(p_amount, v_left);
    IF v_left = 0 OR v_amount > v_left THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'REVERSAL_EXCEEDS_TRANSFER', NULL, NULL, NULL,
            NULL, v_left);
        RETURN;
    END IF;
    v_available := v_from.balance;
    IF v_from.pending_debits > 0 THEN
        v_available := v_from.balance - ledger_live_pending_debits(v_from.id, v_from.pending_debits);
    END IF;
    IF v_amount > v_available THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'INSUFFICIENT_FUNDS', v_from.id,
            v_from.balance, v_available, NULL, NULL);
        RETURN;
    END IF;
    IF v_to.balance::numeric + v_amount > 9223372036854775807 THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'BALANCE_LIMIT_EXCEEDED', v_to.id,
            v_to.balance, NULL, NULL, NULL);
        RETURN;
    END IF;

    PERFORM ledger_move(p_reversal_id, v_from.id, v_to.id, v_amount, v_from.last_sequence + 1, v_to.last_sequence + 1,
                        p_reference, 0);
    UPDATE transfers t SET reversed_amount = t.reversed_amount + v_amount WHERE t.id = v_original.id;
    INSERT INTO transfers (id, owner, debit_account_id, credit_account_id, currency, amount, reference, status,
                           posted_amount, reversal_of)
    VALUES (p_reversal_id, p_client, v_from.id, v_to.id, v_original.currency, v_amount, p_reference, 'posted', v_amount,
            v_original.id);
    PERFORM ledger_write_transfer_events('transfer.posted', p_reversal_id, v_from.id, v_to.id, p_destinations);
    RETURN QUERY SELECT * FROM ledger_transfer_answer('TRANSFER_CREATED', p_reversal_id, p_expires_at);
END
$$;

-- The expiry job's batch (dev.ledger.transfer.HoldExpiry): up to p_batch holds past their expiry, oldest first,
-- each skipped while another transaction holds it (a settlement, another instance's batch); then all their
-- accounts in id order; then each released, with its events. released: how many; oldest_left: the expiry of
-- the oldest hold past it still pending (skipped, or beyond the batch), NULL when none; checked_at: now().
CREATE FUNCTION ledger_expire_holds(p_batch integer, p_destinations text[])
RETURNS TABLE (released integer, oldest_left timestamptz, checked_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    v_holds transfers[];
    v_hold  transfers;
BEGIN
    SELECT array_agg(h.hold) INTO v_holds FROM (
        SELECT t AS hold FROM transfers t WHERE t.status = 'pending' AND t.expires_at <= now()
         ORDER BY t.expires_at LIMIT p_batch FOR NO KEY UPDATE SKIP LOCKED) h;
    IF v_holds IS NOT NULL THEN
        PERFORM 1 FROM accounts a
         WHERE a.id IN (SELECT h.debit_account_id FROM unnest(v_holds) h UNION SELECT h.credit_account_id FROM unnest(v_holds) h)
         ORDER BY a.id FOR NO KEY UPDATE;
        FOREACH v_hold IN ARRAY v_holds LOOP
            PERFORM ledger_release_hold(v_hold, 'expired', p_destinations);
        END LOOP;
    END IF;
    RETURN QUERY
        SELECT coalesce(cardinality(v_holds), 0),
               (SELECT min(t.expires_at) FROM transfers t WHERE t.status = 'pending' AND t.expires_at <= now()),
               now();
END
$$;

-- GET /transfers/{id}: the transfer as it is now, a hold past its expiry shown expired whether released or not.
CREATE FUNCTION ledger_transfer_now(p_id uuid, p_client text)
RETURNS TABLE (transfer_id uuid, debit_account_id uuid, credit_account_id uuid, transfer_amount bigint, currency text,
               transfer_reference text, status text, posted_amount bigint, reversed_amount bigint, reversal_of uuid,
               transfer_expires_at timestamptz, transfer_created_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT t.id, t.debit_account_id, t.credit_account_id, t.amount, t.currency::text, t.reference::text,
           CASE WHEN t.status = 'pending' AND t.expires_at <= now() THEN 'expired' ELSE t.status END,
           t.posted_amount, t.reversed_amount, t.reversal_of, t.expires_at, t.created_at
      FROM transfers t WHERE t.id = p_id AND t.owner = p_client
$$;

-- V5's claim (ledger_claim_traced_deliveries) with each transfer event's transfer, which its data is rendered
-- from. A transfer's currency is both its accounts', so the account's currency column serves it too. V5's
-- claim stays for the previous version's relays: it cannot render transfer events, which only this version
-- writes.
CREATE FUNCTION ledger_claim_deliveries_with_transfers(p_destination text, p_batch integer, p_window integer)
RETURNS TABLE ("position" bigint, event_id uuid, event_type text, occurred_at timestamptz, owner text,
               account_id uuid, currency text, account_created_at timestamptz,
               entry_id uuid, type text, amount bigint, sequence bigint, reference text,
               balance_after bigint, created_at timestamptz, trace_parent text,
               transfer_id uuid, debit_account_id uuid, credit_account_id uuid, transfer_amount bigint,
               transfer_reference text, posted_amount bigint, reversal_of uuid, transfer_expires_at timestamptz,
               transfer_created_at timestamptz)
LANGUAGE sql AS $$
    SELECT c.*, t.id, t.debit_account_id, t.credit_account_id, t.amount, t.reference::text, t.posted_amount,
           t.reversal_of, t.expires_at, t.created_at
      FROM ledger_claim_traced_deliveries(p_destination, p_batch, p_window) c
      JOIN outbox_events o ON o.position = c.position
      LEFT JOIN transfers t ON t.id = o.transfer_id
     ORDER BY c.position
$$;

-- A debit or credit with holds (the contract's available rule: a hold is never spent twice): V4's
-- ledger_post_transaction_core, whose debit takes at most available. The UPDATE checks against the stored
-- pending_debits, which may still count holds past their expiry (a debit it lets through is within available
-- however the holds stand); only when it refuses is the account locked and available counted by time, in a
-- statement of its own, and the debit applied if the expired holds made room. p_record_available: record the
-- available balance an insufficient-funds refusal reports (this version's callers; the previous version's
-- render that refusal without it). available in the answer: the stored one of a replay, or the refusal's;
-- expires_at: the record's (V6), read from it only on a replay.
CREATE FUNCTION ledger_post_transaction_with_holds(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_destinations text[], p_record_available boolean)
RETURNS TABLE (replayed boolean, fingerprint bytea, outcome text,
               entry_id uuid, account_id uuid, type text, amount bigint, sequence bigint,
               reference text, balance_after bigint, created_at timestamptz,
               balance bigint, last_sequence bigint, available bigint, expires_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_delta     bigint := CASE p_type WHEN 'CREDIT' THEN p_amount ELSE -p_amount END;
    v_balance   bigint;
    v_last      bigint;
    v_pending   bigint;
    v_available bigint;
    v_outcome   text;
BEGIN
    -- Record first, optimistically as the APPLIED it nearly always is; corrected below otherwise.
    INSERT INTO idempotency_records (client, key_hash, fingerprint, outcome, resource_id, expires_at)
    VALUES (p_client, p_key_hash, p_fingerprint, 'APPLIED', p_entry_id, p_expires_at)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN QUERY
            SELECT true, r.fingerprint, r.outcome,
                   e.id, e.account_id, e.type, e.amount, e.sequence, e.reference::text,
                   e.balance_after, e.created_at, r.balance, r.last_sequence, r.available, r.expires_at
            FROM idempotency_records r
            LEFT JOIN ledger_entries e ON e.id = r.resource_id
            WHERE r.client = p_client AND r.key_hash = p_key_hash;
        RETURN;
    END IF;

    -- The sequence-checked update: the only way a balance changes by a transaction. numeric: no overflow error.
    UPDATE accounts a
       SET balance = a.balance + v_delta, last_sequence = p_sequence
     WHERE a.id = p_account_id AND a.owner = p_client
       AND a.last_sequence < p_sequence
       AND a.balance::numeric + v_delta BETWEEN CASE WHEN v_delta < 0 THEN a.pending_debits ELSE 0 END
                                            AND 9223372036854775807
    RETURNING a.balance INTO v_balance;
    IF NOT FOUND THEN
        -- Not applied: tell why from the latest committed row, locked (a locking read sees it even when the
        -- UPDATE above waited on a concurrent writer). The sequence check wins over funds.
        SELECT a.balance, a.last_sequence, a.pending_debits INTO v_balance, v_last, v_pending
          FROM accounts a WHERE a.id = p_account_id AND a.owner = p_client FOR NO KEY UPDATE;
        IF NOT FOUND THEN
            v_outcome := 'ACCOUNT_NOT_FOUND';
        ELSIF v_last >= p_sequence THEN
            v_outcome := 'STALE_SEQUENCE';
        ELSE
            v_available := v_balance;
            IF v_pending > 0 THEN
                v_available := v_balance - ledger_live_pending_debits(p_account_id, v_pending);
            END IF;
            IF v_delta < 0 AND p_amount > v_available THEN
                v_outcome := 'INSUFFICIENT_FUNDS';
            ELSIF v_balance::numeric + v_delta > 9223372036854775807 THEN
                v_outcome := 'BALANCE_LIMIT_EXCEEDED';
            END IF;
        END IF;
        IF v_outcome IS NOT NULL THEN
            UPDATE idempotency_records r
               SET outcome = v_outcome, resource_id = NULL, balance = v_balance, last_sequence = v_last,
                   available = CASE WHEN p_record_available AND v_outcome = 'INSUFFICIENT_FUNDS' THEN v_available END
             WHERE r.client = p_client AND r.key_hash = p_key_hash;
            RETURN QUERY
                SELECT false, p_fingerprint, v_outcome, NULL::uuid, NULL::uuid, NULL::text, NULL::bigint,
                       NULL::bigint, NULL::text, NULL::bigint, NULL::timestamptz, v_balance, v_last,
                       CASE WHEN p_record_available AND v_outcome = 'INSUFFICIENT_FUNDS' THEN v_available END,
                       p_expires_at;
            RETURN;
        END IF;
        -- Within available after all (holds past their expiry made room), or the row changed since the UPDATE.
        UPDATE accounts a SET balance = a.balance + v_delta, last_sequence = p_sequence
         WHERE a.id = p_account_id
        RETURNING a.balance INTO v_balance;
    END IF;

    -- After the UPDATE, which holds the account's row lock until commit: see position (V2).
    IF cardinality(p_destinations) > 0 THEN
        PERFORM ledger_write_event('transaction.applied', p_account_id, p_entry_id, p_destinations);
    END IF;
    RETURN QUERY
        INSERT INTO ledger_entries AS e
            (id, account_id, type, amount, sequence, reference, balance_after)
        VALUES (p_entry_id, p_account_id, p_type, p_amount, p_sequence, p_reference, v_balance)
        RETURNING false, p_fingerprint, 'APPLIED'::text,
                  e.id, e.account_id, e.type, e.amount, e.sequence, e.reference::text,
                  e.balance_after, e.created_at, v_balance, p_sequence, NULL::bigint, p_expires_at;
END
$$;

-- V4's function, called by the previous version's instances through V4's and V5's wrappers: now with holds,
-- recording no available (those instances render the refusal without it). Same signature and result.
CREATE OR REPLACE FUNCTION ledger_post_transaction_core(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_destinations text[])
RETURNS TABLE (replayed boolean, fingerprint bytea, outcome text,
               entry_id uuid, account_id uuid, type text, amount bigint, sequence bigint,
               reference text, balance_after bigint, created_at timestamptz,
               balance bigint, last_sequence bigint)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    SELECT r.replayed, r.fingerprint, r.outcome, r.entry_id, r.account_id, r.type, r.amount, r.sequence, r.reference,
           r.balance_after, r.created_at, r.balance, r.last_sequence
      FROM ledger_post_transaction_with_holds(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id, p_entry_id,
                                              p_type, p_amount, p_sequence, p_reference, p_destinations, false) r;
END
$$;

-- What this version calls for a debit or credit: V6's wrapper (the trace and the request's path set for the
-- transaction), over the function above, with the available balance an insufficient-funds refusal reports.
CREATE FUNCTION ledger_post_transaction_checked_with_holds(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_destinations text[], p_trace_parent text, p_request_path text)
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
               entry_id uuid, account_id uuid, type text, amount bigint, sequence bigint,
               reference text, balance_after bigint, created_at timestamptz,
               balance bigint, last_sequence bigint, available bigint, expires_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM ledger_set_request(p_trace_parent, p_request_path);
    RETURN QUERY
    SELECT r.replayed, r.fingerprint = p_fingerprint, r.outcome, r.entry_id, r.account_id, r.type, r.amount,
           r.sequence, r.reference, r.balance_after, r.created_at, r.balance, r.last_sequence, r.available, r.expires_at
      FROM ledger_post_transaction_with_holds(p_client, p_key_hash, p_fingerprint, p_expires_at, p_account_id, p_entry_id,
                                              p_type, p_amount, p_sequence, p_reference, p_destinations, true) r;
END
$$;

-- What this version calls to open an account: V6's wrapper, whose record also says that its answer shows the
-- holds' members (available 0: the account as opened), so that its replays show them too; an open recorded by
-- an earlier version (available NULL) replays without them, as it was answered (with_holds).
CREATE FUNCTION ledger_open_account_checked_with_holds(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_currency text, p_destinations text[], p_trace_parent text, p_request_path text)
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
               account_id uuid, currency text, created_at timestamptz, with_holds boolean, expires_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    PERFORM ledger_set_request(p_trace_parent, p_request_path);
    -- Record first: a concurrent duplicate waits here on the key, then sees it committed.
    INSERT INTO idempotency_records (client, key_hash, fingerprint, outcome, resource_id, expires_at, available)
    VALUES (p_client, p_key_hash, p_fingerprint, 'OPENED', p_account_id, p_expires_at, 0)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN QUERY
            SELECT true, r.fingerprint = p_fingerprint, r.outcome, a.id, a.currency::text, a.created_at,
                   r.available IS NOT NULL, r.expires_at
            FROM idempotency_records r LEFT JOIN accounts a ON a.id = r.resource_id
            WHERE r.client = p_client AND r.key_hash = p_key_hash;
        RETURN;
    END IF;

    IF cardinality(p_destinations) > 0 THEN
        PERFORM ledger_write_event('account.opened', p_account_id, NULL, p_destinations);
    END IF;
    RETURN QUERY
        INSERT INTO accounts AS a (id, owner, currency) VALUES (p_account_id, p_client, p_currency)
        RETURNING false, true, 'OPENED'::text, a.id, a.currency::text, a.created_at, true, p_expires_at;
END
$$;
