-- A debit's or credit's statement in one function (issue 37, item 5: the service's statement within 1.2 times the
-- least payment SQL in pgbench). V7's ledger_post_transaction_checked_with_holds was a wrapper: it called
-- ledger_set_request (a function of its own, whose set_config of the request's path fed the record's column default),
-- then returned the rows of ledger_post_transaction_with_holds through a second RETURN QUERY; every nested call is
-- an executor started, and every RETURN QUERY a tuple store filled and read. The same function, with the same
-- signature, rules, refusals, locks and answers, now does that work itself: the trace's setting only when there is
-- a trace, the request's path written into the record directly, and with_holds' body with the available balance
-- recorded for an insufficient-funds refusal (what the wrapper always asked for). ledger_post_transaction_with_holds
-- stays as V7 made it for ledger_post_transaction_core, which only versions before V7's still call.
CREATE OR REPLACE FUNCTION ledger_post_transaction_checked_with_holds(
    p_client text, p_key_hash bytea, p_fingerprint bytea, p_expires_at timestamptz,
    p_account_id uuid, p_entry_id uuid, p_type text, p_amount bigint, p_sequence bigint,
    p_reference text, p_destinations text[], p_trace_parent text, p_request_path text)
RETURNS TABLE (replayed boolean, same_request boolean, outcome text,
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
    -- ledger_write_event reads the trace from the transaction's settings (V5)
    IF p_trace_parent IS NOT NULL THEN
        PERFORM set_config('ledger.trace_parent', p_trace_parent, true);
    END IF;
    -- Record first, optimistically as the APPLIED it nearly always is; corrected below otherwise.
    INSERT INTO idempotency_records (client, key_hash, fingerprint, outcome, resource_id, expires_at, request_path)
    VALUES (p_client, p_key_hash, p_fingerprint, 'APPLIED', p_entry_id, p_expires_at, p_request_path)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN QUERY
            SELECT true, r.fingerprint = p_fingerprint, r.outcome,
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
                   available = CASE WHEN v_outcome = 'INSUFFICIENT_FUNDS' THEN v_available END
             WHERE r.client = p_client AND r.key_hash = p_key_hash;
            RETURN QUERY
                SELECT false, true, v_outcome, NULL::uuid, NULL::uuid, NULL::text, NULL::bigint,
                       NULL::bigint, NULL::text, NULL::bigint, NULL::timestamptz, v_balance, v_last,
                       CASE WHEN v_outcome = 'INSUFFICIENT_FUNDS' THEN v_available END, p_expires_at;
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
        RETURNING false, true, 'APPLIED'::text,
                  e.id, e.account_id, e.type, e.amount, e.sequence, e.reference::text,
                  e.balance_after, e.created_at, v_balance, p_sequence, NULL::bigint, p_expires_at;
END
$$;

-- An entry's reference to its account, checked by a foreign-key trigger on every insert (a FOR KEY SHARE lookup of
-- the row the statement has just updated), checks nothing this schema does not already hold, as V10 said of the
-- transfer row's: every function that writes an entry has found the account, the client's own, and holds its row
-- lock in the same transaction (a payment by its sequence-checked UPDATE, a transfer's legs by locking both
-- accounts; ACCOUNT_NOT_FOUND otherwise), and accounts are never deleted but by a client's move, which deletes the
-- client's entries first. Measured with bench/statement.sh: V10's statement 1.28 times the least payment SQL's
-- backend CPU, the function above alone 1.17, with this too 1.10 (docs/performance.md).
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_account_id_fkey;
