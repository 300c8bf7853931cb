-- Tables for the pgbench limits, beside (not part of) the service's schema.
DROP TABLE IF EXISTS bench_ledger, bench_accounts, bench_account_ids;
CREATE TABLE bench_accounts (id bigint PRIMARY KEY, currency char(3) NOT NULL DEFAULT 'EUR',
  balance bigint NOT NULL DEFAULT 0 CHECK (balance >= 0), last_sequence bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE bench_ledger (id bigserial PRIMARY KEY, account_id bigint NOT NULL REFERENCES bench_accounts (id),
  amount bigint NOT NULL, sequence bigint NOT NULL, idempotency_key text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO bench_accounts (id) SELECT g FROM generate_series(1, 1000) g;
VACUUM ANALYZE bench_accounts;
-- The accounts the run seeded through the API, numbered for pgbench-service-payment.sql.
CREATE TABLE bench_account_ids AS SELECT (row_number() OVER (ORDER BY id))::int AS n, id FROM accounts;
ALTER TABLE bench_account_ids ADD PRIMARY KEY (n);
