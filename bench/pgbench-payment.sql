-- The least SQL a new payment needs: one transaction with the sequence-checked UPDATE and one
-- INSERT of a ledger row carrying the unique idempotency key (a 201's answer can be rebuilt from it).
\set aid random(1, :naccounts)
BEGIN;
UPDATE bench_accounts SET balance = balance + 1, last_sequence = last_sequence + 1
 WHERE id = :aid AND last_sequence < last_sequence + 1 AND balance + 1 >= 0 RETURNING balance;
INSERT INTO bench_ledger (account_id, amount, sequence, idempotency_key)
 VALUES (:aid, 1, 0, gen_random_uuid()::text);
END;
