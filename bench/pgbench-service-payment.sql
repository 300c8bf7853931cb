-- The service's own statement for a new payment, as TransactionRepository sends it: one call of
-- ledger_post_transaction_checked_with_holds (idempotency record with the request's path, sequence-checked UPDATE, ledger row; no
-- broker of events, no trace) in autocommit.
-- Against the service's schema in the benchmark database, on the accounts the run seeded (listed
-- in bench_account_ids). The sequence is the clock in microseconds: above every earlier one.
\set n random(1, :naccounts)
SELECT p.outcome FROM (SELECT id FROM bench_account_ids WHERE n = :n) a,
  ledger_post_transaction_checked_with_holds('bench', sha256(gen_random_uuid()::text::bytea), '\x00'::bytea,
  now() + interval '1 day', a.id, gen_random_uuid(), 'CREDIT', 1,
  (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, NULL, '{}'::text[], NULL, '/accounts/' || a.id || '/transactions') p;
