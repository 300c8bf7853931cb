-- The service's own statement for a new payment, as TransactionRepository sends it: one call of
-- ledger_post_transaction_checked (idempotency record, sequence-checked UPDATE, ledger row; no broker of events) in autocommit.
-- Against the service's schema in the benchmark database, on the accounts the run seeded (listed
-- in bench_account_ids). The sequence is the clock in microseconds: above every earlier one.
\set n random(1, :naccounts)
SELECT outcome FROM ledger_post_transaction_checked('bench', sha256(gen_random_uuid()::text::bytea), '\x00'::bytea,
  now() + interval '1 day', (SELECT id FROM bench_account_ids WHERE n = :n), gen_random_uuid(), 'CREDIT', 1,
  (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, NULL, '{}'::text[]);
