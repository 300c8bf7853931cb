-- The account read.
\set aid random(1, :naccounts)
SELECT id, currency, balance, last_sequence, created_at FROM bench_accounts WHERE id = :aid;
