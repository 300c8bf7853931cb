-- The service's own statement for a transfer, as TransferRepository sends it: one call of ledger_create_transfer
-- (idempotency record with the request's path, both accounts locked in id order, both legs and the transfer
-- row; no broker of events, no trace) in autocommit, posted at once, 1 between two different seeded accounts
-- (bench_account_ids, bench/pgbench-schema.sql), each leg at its account's last sequence + 1.
\set n random(1, :naccounts)
\set m 1 + (:n + random(0, :naccounts - 2)) % :naccounts
SELECT t.outcome FROM (SELECT id FROM bench_account_ids WHERE n = :n) d, (SELECT id FROM bench_account_ids WHERE n = :m) c,
  ledger_create_transfer('bench', sha256(gen_random_uuid()::text::bytea), '\x00'::bytea, now() + interval '1 day',
  '/transfers', gen_random_uuid(), d.id, c.id, 1, NULL, false, 86400, NULL, NULL, '{}'::text[], NULL) t;
