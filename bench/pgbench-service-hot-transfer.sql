-- The hot-account scenario's statement: pgbench-service-transfer.sql's call, every transfer from the one source
-- account (-D hot=its id, seed_transfers' hot-account.txt) to a seeded account, so that every call queues on
-- the source's row lock as the scenario's do.
\set m random(1, :naccounts)
SELECT t.outcome FROM (SELECT id FROM bench_account_ids WHERE n = :m) c,
  ledger_create_transfer('bench', sha256(gen_random_uuid()::text::bytea), '\x00'::bytea, now() + interval '1 day',
  '/transfers', gen_random_uuid(), :hot, c.id, 1, NULL, false, 86400, NULL, NULL, '{}'::text[], NULL) t
 WHERE c.id <> :hot;
