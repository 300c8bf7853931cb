-- A transfer's statement with fewer nested calls (issue 38, item 6: a transfer's machine CPU at most 1.3 times a new
-- payment's). perf on the backend under pgbench (2026-11-28) put 14 % of V9's ledger_create_transfer in starting
-- executors: every nested function call (ledger_record_transfer_request, ledger_set_request, ledger_lock_accounts,
-- ledger_write_transfer_events) is a statement of its caller and one or more statements of its own. The same function, with the same signature, rules, refusals, locks (both accounts in
-- id order, by one statement) and answers, does their work itself: the key's record written in place, the accounts
-- locked by a loop over the locking query, and the events' function called only when there are destinations.
-- The other transfer functions keep calling the helpers.
CREATE OR REPLACE FUNCTION ledger_create_transfer(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz, p_request_path text,
    p_transfer_id uuid, p_debit uuid, p_credit uuid, p_amount bigint, p_reference text, p_pending boolean,
    p_timeout_seconds integer, p_debit_sequence bigint, p_credit_sequence bigint, p_destinations text[],
    p_trace_parent text)
RETURNS SETOF ledger_transfer_outcome
LANGUAGE plpgsql AS $$
DECLARE
    v_row       accounts;
    v_debit     accounts;
    v_credit    accounts;
    v_debit_seq  bigint;
    v_credit_seq bigint;
    v_available bigint;
    v_created   timestamptz;
    v_expires   timestamptz;
BEGIN
    -- ledger_record_transfer_request's work: the trace for the events, then the key's record, first
    IF p_trace_parent IS NOT NULL THEN
        PERFORM set_config('ledger.trace_parent', p_trace_parent, true);
    END IF;
    INSERT INTO idempotency_records (client, key_hash, fingerprint, outcome, resource_id, expires_at, request_path)
    VALUES (p_client, p_key_hash, p_fingerprint, 'TRANSFER_CREATED', p_transfer_id, p_expires_at, p_request_path)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN QUERY SELECT * FROM ledger_transfer_replay(p_client, p_key_hash, p_fingerprint);
        RETURN;
    END IF;

    -- ledger_lock_accounts' work: both rows locked by one statement, in id order; an account unknown or another
    -- client's stays NULL
    FOR v_row IN SELECT * FROM accounts a WHERE a.id IN (p_debit, p_credit) AND a.owner = p_client ORDER BY a.id FOR NO KEY UPDATE LOOP
        IF v_row.id = p_debit THEN v_debit := v_row; ELSE v_credit := v_row; END IF;
    END LOOP;
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
    IF v_credit.balance::numeric + (CASE WHEN p_pending THEN v_credit.pending_credits ELSE 0 END) + p_amount
           > 9223372036854775807 THEN
        RETURN QUERY SELECT * FROM ledger_transfer_refused(p_client, p_key_hash, p_expires_at, 'BALANCE_LIMIT_EXCEEDED', p_credit,
            v_credit.balance, NULL, NULL, NULL);
        RETURN;
    END IF;

    IF p_pending THEN
        v_expires := now() + make_interval(secs => p_timeout_seconds);
        UPDATE accounts a
           SET pending_debits = a.pending_debits + CASE WHEN a.id = p_debit THEN p_amount ELSE 0 END,
               pending_credits = a.pending_credits + CASE WHEN a.id = p_credit THEN p_amount ELSE 0 END
         WHERE a.id IN (p_debit, p_credit);
        INSERT INTO transfers (id, owner, debit_account_id, credit_account_id, currency, amount, reference, status,
                               posted_amount, expires_at)
        VALUES (p_transfer_id, p_client, p_debit, p_credit, v_debit.currency, p_amount, p_reference, 'pending', 0, v_expires)
        RETURNING created_at INTO v_created;
        IF cardinality(p_destinations) > 0 THEN
            PERFORM ledger_write_transfer_events('transfer.pending', p_transfer_id, p_debit, p_credit, p_destinations);
        END IF;
    ELSE
        -- both legs, their entries and the transfer row in one statement
        WITH moved AS (
            UPDATE accounts a
               SET balance = a.balance + CASE WHEN a.id = p_debit THEN -p_amount ELSE p_amount END,
                   last_sequence = CASE WHEN a.id = p_debit THEN v_debit_seq ELSE v_credit_seq END
             WHERE a.id IN (p_debit, p_credit)
            RETURNING a.id, a.balance),
        legs AS (
            INSERT INTO ledger_entries (id, account_id, type, amount, sequence, reference, balance_after, transfer_id)
            SELECT gen_random_uuid(), m.id, CASE WHEN m.id = p_debit THEN 'DEBIT' ELSE 'CREDIT' END, p_amount,
                   CASE WHEN m.id = p_debit THEN v_debit_seq ELSE v_credit_seq END, p_reference, m.balance, p_transfer_id
              FROM moved m)
        INSERT INTO transfers (id, owner, debit_account_id, credit_account_id, currency, amount, reference, status,
                               posted_amount)
        VALUES (p_transfer_id, p_client, p_debit, p_credit, v_debit.currency, p_amount, p_reference, 'posted', p_amount)
        RETURNING created_at INTO v_created;
        IF cardinality(p_destinations) > 0 THEN
            PERFORM ledger_write_transfer_events('transfer.posted', p_transfer_id, p_debit, p_credit, p_destinations);
        END IF;
    END IF;
    -- the answer from what this statement wrote, as ledger_transfer_answer would read it back
    RETURN QUERY SELECT false, true, 'TRANSFER_CREATED'::text, p_transfer_id, p_debit, p_credit, p_amount, v_debit.currency::text,
        p_reference, CASE WHEN p_pending THEN 0::bigint ELSE p_amount END, NULL::uuid, v_expires, v_created,
        NULL::uuid, NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, p_expires_at;
END
$$;

-- The transfer row's references to its two accounts, checked by two foreign-key triggers on every insert (the
-- other half of the statement's trigger work, 3 % of its time in pgbench), check nothing this schema does not
-- already hold: every function that writes a transfer row has found and locked both accounts in the same
-- transaction (a client's own; ACCOUNT_NOT_FOUND otherwise), a posted transfer's legs are entries whose
-- account_id references the account, and accounts are never deleted but by a client's move, which deletes its
-- transfers first. The entries keep their reference. The reversal's reference to its transfer stays.
ALTER TABLE transfers DROP CONSTRAINT transfers_debit_account_id_fkey,
                      DROP CONSTRAINT transfers_credit_account_id_fkey;
