#!/usr/bin/env bash
# The payment statement against the least payment SQL, measured where PostgreSQL spends it: the CPU of the
# pgbench connections' own backends per committed transaction (issue 37, item 5). Each database gets the
# service's migrations (src/main/resources/db/migration, in version order, as Flyway applies them) up to a
# version, 1,000 accounts and bench/pgbench-schema.sql's tables; then every variant runs in turn for
# STATEMENT_SECONDS, for STATEMENT_ROUNDS rounds, and the figure is the backends' CPU (/proc/<pid>/stat) over the
# middle of each run divided by the transactions committed meanwhile (pg_stat_database). The machine's other work
# hardly moves it, unlike a rate.
#
#   bash bench/statement.sh                       the least SQL, and the service's statement at the newest version
#   STATEMENT_VERSIONS="10 11" bash bench/statement.sh   the service's statement at V10 and at V11, alternating
#
# Needs the local PostgreSQL (trust auth; pgbench is installed from Debian when missing); databases
# ledger_statement_v<N>, dropped first.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
install_missing pgbench:postgresql-client psql:postgresql-client

ROUNDS=${STATEMENT_ROUNDS:-3}
SECONDS_PER_RUN=${STATEMENT_SECONDS:-10}
CONNECTIONS=${STATEMENT_CONNECTIONS:-8}
MIGRATIONS=src/main/resources/db/migration
NEWEST=$(ls $MIGRATIONS | sed -n 's/^V\([0-9]*\)__.*/\1/p' | sort -n | tail -1)
VERSIONS=${STATEMENT_VERSIONS:-$NEWEST}
export PGHOST=127.0.0.1 PGUSER=postgres

prepare() { # version
  local db=ledger_statement_v$1
  psql -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  for file in $(ls $MIGRATIONS | sort -t_ -k1.2 -n); do
    local v=${file#V}; v=${v%%__*}
    (( v <= $1 )) || continue
    psql -q -v ON_ERROR_STOP=1 -d $db -f "$MIGRATIONS/$file" >/dev/null
  done
  psql -q -v ON_ERROR_STOP=1 -d $db >/dev/null <<'SQL'
INSERT INTO accounts (id, owner, currency) SELECT gen_random_uuid(), 'bench', 'EUR' FROM generate_series(1, 1000);
SQL
  psql -q -v ON_ERROR_STOP=1 -d $db -f bench/pgbench-schema.sql >/dev/null
  psql -q -d $db -c "VACUUM ANALYZE" >/dev/null
}

commits() { psql -tA -d "$1" -c "SELECT xact_commit FROM pg_stat_database WHERE datname = '$1'"; }

measure() { # db script: prints ms of backend CPU per committed transaction
  local db=$1 script=$2 quarter=$(( SECONDS_PER_RUN / 4 ))
  local DB=$db # pg_ticks (bench/lib.sh): the backends connected to it, pgbench's while it runs
  psql -q -d "$db" -c CHECKPOINT # so that no checkpoint starts in the window, and each run pays the same full-page writes
  pgbench -n -M prepared -c "$CONNECTIONS" -j 2 -T "$SECONDS_PER_RUN" -D naccounts=1000 -f "$script" "$db" >/dev/null 2>&1 &
  local bench=$!
  sleep "$quarter"
  local cpu0 c0 cpu1 c1
  cpu0=$(pg_ticks); c0=$(commits "$db")
  sleep $(( SECONDS_PER_RUN - 2 * quarter ))
  cpu1=$(pg_ticks); c1=$(commits "$db")
  wait $bench
  ms_per $(( cpu1 - cpu0 )) $(( c1 - c0 ))
}

declare -A RESULTS
run() { # name db script
  local ms; ms=$(measure "$2" "$3")
  RESULTS[$1]="${RESULTS[$1]:-} $ms"
  echo "round $round: $1 $ms ms"
}

for v in $VERSIONS; do prepare "$v"; done
echo "backend CPU per committed transaction; pgbench -M prepared -c $CONNECTIONS -j 2, ${SECONDS_PER_RUN} s per run, the middle half measured"
first=${VERSIONS%% *}
for round in $(seq 1 "$ROUNDS"); do
  run "least payment SQL" ledger_statement_v$first bench/pgbench-payment.sql
  for v in $VERSIONS; do
    run "service's statement at V$v" ledger_statement_v$v bench/pgbench-service-payment.sql
  done
done
median() { tr ' ' '\n' | grep . | median_of; }
least=$(echo "${RESULTS["least payment SQL"]}" | median)
echo "medians of $ROUNDS rounds (ms of backend CPU per transaction, and ÷ the least payment SQL's):"
echo "  least payment SQL: $least"
for v in $VERSIONS; do
  m=$(echo "${RESULTS["service's statement at V$v"]}" | median)
  echo "  service's statement at V$v: $m ($(per "$m" "$least" 2))"
done
