# Shared by the scripts of bench/ (sourced, not run). The caller sets DB (a PostgreSQL database), REDIS_DB
# (a Redis database number) and API_KEYS (the value of LEDGER_API_KEYS; new_api_key and training_run set it).

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# install_missing COMMAND:PACKAGE...: installs from Debian the packages whose command is missing. While
# it installs, a policy-rc.d (unless the machine has one) keeps a package from starting its service:
# nginx's would listen on port 80; the benchmark starts its own nginx on a port of its own.
install_missing() {
  local pair policy="" missing=()
  for pair in "$@"; do command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null
    as_root chmod +x /usr/sbin/policy-rc.d
    policy=1
  fi
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  [ -z "$policy" ] || as_root rm -f /usr/sbin/policy-rc.d
}

# new_api_key: a fresh API key for the load (API_KEY, and LEDGER_BENCH_API_KEY, which bench/common.lua
# sends) and the LEDGER_API_KEYS entry that accepts it (API_KEYS, client "bench")
new_api_key() {
  API_KEY="bench-ledger-key-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  API_KEYS="bench:$(printf %s "$API_KEY" | sha256sum | cut -d' ' -f1)"
  export LEDGER_BENCH_API_KEY="$API_KEY"
}

# fresh_stores: an empty database DB and an empty Redis database REDIS_DB
fresh_stores() {
  command psql -h 127.0.0.1 -U postgres -d postgres -qtA -v ON_ERROR_STOP=1 \
    -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
  redis-cli -n "$REDIS_DB" FLUSHDB >/dev/null
}

# launch JAVA JAR PORT LOG [JVM options...]: the packaged application against DB and REDIS_DB, in
# the background ($! is its pid)
launch() {
  local java=$1 jar=$2 port=$3 log=$4; shift 4
  QUARKUS_HTTP_PORT=$port \
  QUARKUS_DATASOURCE_REACTIVE_URL=postgresql://127.0.0.1:5432/$DB \
  QUARKUS_DATASOURCE_JDBC_URL=jdbc:postgresql://127.0.0.1:5432/$DB \
  QUARKUS_DATASOURCE_USERNAME=postgres \
  QUARKUS_REDIS_HOSTS=redis://127.0.0.1:6379/$REDIS_DB \
  LEDGER_API_KEYS="$API_KEYS" \
    "$java" "$@" -jar "$jar" > "$log" 2>&1 &
}

# wait_ready PID PORT LOG: until readiness answers 200; fails if the process exits, or after 60 s
wait_ready() {
  for _ in $(seq 1 3000); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$2/q/health/ready")" = "200" ] && return 0
    kill -0 "$1" 2>/dev/null || { echo "the service exited; see $3" >&2; return 1; }
    sleep 0.02
  done
  echo "the service was not ready within 60 s; see $3" >&2
  return 1
}

# call CURL-ARGS...: a request whose answer does not matter
call() { curl -s -o /dev/null "$@" || true; }

# post BASE KEY PATH BODY: the status of a POST with the benchmark's API key
post() {
  curl -s -o /dev/null -w '%{http_code}' -X POST "$1$3" -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $API_KEY" -H "Idempotency-Key: $2" -d "$4"
}

# seed_accounts BASE DIR ACCOUNTS REPLAY_KEYS: opens ACCOUNTS accounts through the API (DIR/accounts.txt, an id a
# line: reads.lua's and new-payments.lua's) and completes REPLAY_KEYS payments over them (DIR/replays.txt,
# a key, an account and a body a line: what replays.lua sends again); fails unless every one succeeded
seed_accounts() {
  local base=$1 dir=$2 accounts=$3 keys=$4 i seeded
  export -f post; export API_KEY
  seq 1 "$accounts" | SEED_BASE=$base xargs -P 16 -I{} bash -c \
    'body=$(curl -s -X POST "$SEED_BASE/accounts" -H "Content-Type: application/json" -H "Authorization: Bearer $API_KEY" \
       -H "Idempotency-Key: bench-open-{}" -d "{\"currency\":\"EUR\"}"); printf "%s\n" "$(sed -E "s/.*\"id\":\"([^\"]+)\".*/\1/" <<< "$body")"' \
    | grep -E '^[0-9a-f-]{36}$' > "$dir/accounts.txt" || true
  [ "$(wc -l < "$dir/accounts.txt")" -eq "$accounts" ] || { echo "seeding accounts failed" >&2; return 1; }
  local -a ids; mapfile -t ids < "$dir/accounts.txt"
  for i in $(seq 1 "$keys"); do
    echo "bench-replay-$i ${ids[$(( i % accounts ))]} {\"type\":\"CREDIT\",\"amount\":1,\"sequence\":$i}"
  done > "$dir/replays.txt"
  # -d '\n': xargs must not eat the JSON's quotes; every seed must be a 201
  # shellcheck disable=SC2016
  seeded=$(SEED_BASE=$base xargs -P 16 -d '\n' -I{} bash -c 'read -r k a b <<< "$1"; printf "%s\n" "$(post "$SEED_BASE" "$k" "/accounts/$a/transactions" "$b")"' _ {} \
    < "$dir/replays.txt" | grep -c '^201$' || true)
  [ "$seeded" -eq "$keys" ] || { echo "seeding replay keys failed: $seeded of $keys" >&2; return 1; }
}

# seed_transfers BASE DIR: what the transfer scenarios need beyond seed_accounts: every account of
# DIR/accounts.txt credited with 10^12 (at sequence 10^9: above the replay keys' sequences, below every new
# payment's, which start from the clock in microseconds), and one more account, the hot-account scenario's
# source (DIR/hot-account.txt), credited with 10^15; fails unless every one succeeded
seed_transfers() {
  local base=$1 dir=$2 funded hot
  export -f post; export API_KEY
  # shellcheck disable=SC2016
  funded=$(SEED_BASE=$base xargs -P 16 -I{} bash -c \
    'printf "%s\n" "$(post "$SEED_BASE" "bench-fund-$1" "/accounts/$1/transactions" "{\"type\":\"CREDIT\",\"amount\":1000000000000,\"sequence\":1000000000}")"' _ {} \
    < "$dir/accounts.txt" | grep -c '^201$' || true)
  [ "$funded" -eq "$(wc -l < "$dir/accounts.txt")" ] || { echo "funding the accounts failed: $funded funded" >&2; return 1; }
  hot=$(curl -s -X POST "$base/accounts" -H "Content-Type: application/json" -H "Authorization: Bearer $API_KEY" \
    -H "Idempotency-Key: bench-open-hot" -d '{"currency":"EUR"}' | sed -E 's/.*"id":"([^"]+)".*/\1/')
  [[ "$hot" =~ ^[0-9a-f-]{36}$ ]] || { echo "opening the hot account failed" >&2; return 1; }
  [ "$(post "$base" bench-fund-hot "/accounts/$hot/transactions" '{"type":"CREDIT","amount":1000000000000000,"sequence":1}')" = 201 ] \
    || { echo "funding the hot account failed" >&2; return 1; }
  echo "$hot" > "$dir/hot-account.txt"
}

# scenario_args SCENARIO RUN CONNS DIR: the Lua script of a wrk scenario and its arguments, a word each
# (RUN: a run id in every fresh key; DIR: where seed wrote accounts.txt and replays.txt)
scenario_args() {
  case $1 in
    new-payments) echo "new-payments.lua $2 2 $4/accounts.txt" ;;
    replays) echo "replays.lua $4/replays.txt" ;;
    inflight) echo "inflight.lua $2 2 $(( $3 / 2 )) $4/accounts.txt" ;;
    reads) echo "reads.lua $4/accounts.txt" ;;
    transfers) echo "transfers.lua $2 2 $4/accounts.txt" ;;
    hot-account) echo "hot-account.lua $2 2 $4/hot-account.txt $4/accounts.txt" ;;
    *) echo "unknown scenario $1" >&2; return 1 ;;
  esac
}

# wrk_load URL PHASE DURATION CONNS LUA ARGS...: one wrk run of bench/LUA, 2 threads, as the benchmark
# runs them; sequences start from the clock in microseconds, above everything an earlier run sent. The
# script prints a BENCH line (requests=... rps=... p99_ms=... statuses=...) when PHASE is measure.
wrk_load() {
  local url=$1 phase=$2 duration=$3 conns=$4 lua=$5; shift 5
  BENCH_SEQ_BASE=$(( $(date +%s%N) / 1000 )) BENCH_PHASE=$phase wrk -t2 -c"$conns" -d"$duration" -s "bench/$lua" "$url" -- "$@"
}

# cpu_ticks PID...: the user and system CPU time the processes have used so far, in clock ticks
cpu_ticks() { local pid total=0; for pid in "$@"; do total=$(( total + $(awk '{print $14 + $15}' "/proc/$pid/stat") )); done; echo $total; }
# pg_ticks: the CPU time so far, in clock ticks, of the local PostgreSQL's backends connected to DB (the service's
# pool): the database's own share of the work, without the backends of other databases on a shared server (nor
# PostgreSQL's background writers); a backend that exits in between takes its ticks with it
pg_ticks() {
  local pid total=0
  for pid in $(command psql -h 127.0.0.1 -U postgres -d postgres -qtA -c "SELECT pid FROM pg_stat_activity WHERE datname = '$DB'"); do
    total=$(( total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0) ))
  done
  echo $total
}
# pg_wal: the server's WAL written so far, "bytes full-page-images" (pg_stat_wal; every database's)
pg_wal() { command psql -h 127.0.0.1 -U postgres -d postgres -qtAF' ' -c "SELECT wal_bytes, wal_fpi FROM pg_stat_wal"; }
# pg_maintenance: the autovacuum and autoanalyze runs of the benchmark's database's tables so far
pg_maintenance() {
  command psql -h 127.0.0.1 -U postgres -d "$DB" -qtA \
    -c "SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_user_tables"
}
TICK_MS=$(( 1000 / $(getconf CLK_TCK) ))
# per AMOUNT COUNT [DIGITS]: AMOUNT per operation, with DIGITS decimals (3); 0 when COUNT is 0
per() { awk -v t="$1" -v n="$2" -v d="${3:-3}" 'BEGIN { printf "%.*f", d, (n > 0 ? t / n : 0) }'; }
# ms_per TICKS COUNT [DIGITS]: CPU milliseconds per operation, with DIGITS decimals (3)
ms_per() { per $(( $1 * TICK_MS )) "$2" "${3:-3}"; }
# field_of LINE KEY: the value of KEY=value in a line of such pairs (whole keys only)
field_of() { sed -E "s/(^|.* )$2=([^ ]+).*/\2/" <<< "$1"; }
# median_of: the median of the numbers on standard input, one a line
median_of() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# package_aot_jar DIR: the application packaged afresh as an aot-jar (every class on the JVM's own
# class path, which a class archive or an AOT cache needs to serve them in full) into DIR, under target/
package_aot_jar() {
  rm -rf "$1"
  ./mvnw -q -B package -DskipTests -Dquarkus.package.jar.type=aot-jar -Dquarkus.package.output-directory="${1#target/}"
}

# training_run NAME JAVA JAR PORT ROUNDS OUTPUT LOG [JVM options...]: the training run of a start-time
# archive or cache. Starts JAR with the options (one of which names OUTPUT) on fresh stores, sends
# every kind of request and answer ROUNDS times, so that the classes behind each are loaded (and, on
# JDK 25+, profiled), and stops it: the JVM writes OUTPUT as it exits. Fails when it wrote none.
training_run() {
  local name=$1 java=$2 jar=$3 port=$4 rounds=$5 output=$6 log=$7; shift 7
  local key base="http://127.0.0.1:$port" i account path app
  key="$name-training-key-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  API_KEYS="$name:$(printf %s "$key" | sha256sum | cut -d' ' -f1)"
  fresh_stores
  rm -f "$output"
  launch "$java" "$jar" "$port" "$log" "$@"
  app=$!
  # shellcheck disable=SC2064
  trap "kill $app 2>/dev/null || true" EXIT
  wait_ready $app "$port" "$log"
  local auth="Authorization: Bearer $key" json="Content-Type: application/json"
  for i in $(seq 1 "$rounds"); do
    account=$(curl -s -X POST "$base/accounts" -H "$auth" -H "$json" -H "Idempotency-Key: open-$i" -d '{"currency":"EUR"}' \
      | sed -E 's/.*"id":"([^"]+)".*/\1/')
    path="$base/accounts/$account/transactions"
    call -X POST "$path" -H "$auth" -H "$json" -H "Idempotency-Key: pay-$i" -d '{"type":"CREDIT","amount":500,"sequence":1}'
    call -X POST "$path" -H "$auth" -H "$json" -H "Idempotency-Key: pay-$i" -d '{"type":"CREDIT","amount":500,"sequence":1}'
    call -X POST "$path" -H "$auth" -H "$json" -H "Idempotency-Key: pay-$i" -d '{"type":"CREDIT","amount":501,"sequence":1}'
    call -X POST "$path" -H "$auth" -H "$json" -H "Idempotency-Key: debit-$i" -d '{"type":"DEBIT","amount":9999,"sequence":2}'
    call -X POST "$path" -H "$auth" -H "$json" -H "Idempotency-Key: stale-$i" -d '{"type":"DEBIT","amount":1,"sequence":1}'
    call -X POST "$path" -H "$auth" -H "$json" -d '{"type":"DEBIT","amount":1,"sequence":3}'
    call -X POST "$path" -H "$auth" -H "$json" -H "Idempotency-Key: bad-$i" -d '{"type":"DEBIT","amount":1.5}'
    call "$base/accounts/$account" -H "$auth"
    call "$base/accounts/$account/transactions?limit=10" -H "$auth"
    call "$base/accounts/not-an-id" -H "$auth"
    call "$base/accounts/$account"
  done
  call "$base/q/health/ready"; call "$base/q/metrics"; call "$base/q/openapi"
  kill $app
  wait $app || true
  trap - EXIT
  [ -s "$output" ] || { echo "$name: nothing written to $output; see $log" >&2; return 1; }
}

# commands_setup SCENARIOS: what the commands scenarios need before the service starts. "commands": the service
# consumes commands from a virtual host of the benchmark's own (BROKER_VHOST), published by the broker user "bench"
# (the client id of API_KEYS; its password BROKER_PASSWORD) through RabbitMQ's Java client. "kafka-commands": the
# same commands over Kafka (the client "bench" again), to a broker of the benchmark's own (.ci/kafka on
# BENCH_KAFKA_PORT, 19392; KAFKA_BENCH its address) in OUT/kafka, which commands_teardown stops; the service consumes
# it beside RabbitMQ. Both export the service's settings and write OUT/classpath.txt for the load programs. Call it
# after new_api_key, with OUT set.
commands_setup() {
  COMMANDS_SCENARIOS=" $1 "
  BROKER_VHOST=ledger-bench
  BROKER_PASSWORD="$API_KEY"
  KAFKA_BENCH_PORT=${BENCH_KAFKA_PORT:-19392}
  KAFKA_BENCH="127.0.0.1:$KAFKA_BENCH_PORT"
  if [[ "$COMMANDS_SCENARIOS" == *" commands "* ]]; then
    as_root rabbitmqctl -q delete_vhost "$BROKER_VHOST" >/dev/null 2>&1 || true
    as_root rabbitmqctl -q add_vhost "$BROKER_VHOST"
    as_root rabbitmqctl -q add_user bench "$BROKER_PASSWORD" >/dev/null 2>&1 || as_root rabbitmqctl -q change_password bench "$BROKER_PASSWORD"
    for user in bench guest; do as_root rabbitmqctl -q set_permissions -p "$BROKER_VHOST" "$user" '.*' '.*' '.*'; done
    export LEDGER_MESSAGING_RABBITMQ_ENABLED=true RABBITMQ_HOST=127.0.0.1 RABBITMQ_PORT=5672 RABBITMQ_USERNAME=guest \
      RABBITMQ_PASSWORD=guest RABBITMQ_VIRTUAL_HOST="$BROKER_VHOST"
  fi
  if [[ "$COMMANDS_SCENARIOS" == *" kafka-commands "* ]]; then
    KAFKA_PORT=$KAFKA_BENCH_PORT KAFKA_DIR=$OUT/kafka bash .ci/kafka start >/dev/null
    export LEDGER_MESSAGING_KAFKA_ENABLED=true KAFKA_BOOTSTRAP_SERVERS="$KAFKA_BENCH"
  fi
  if [[ "$COMMANDS_SCENARIOS" == *" commands "* || "$COMMANDS_SCENARIOS" == *" kafka-commands "* ]]; then
    [ -f "$OUT/classpath.txt" ] || ./mvnw -q -B dependency:build-classpath -Dmdep.outputFile="$OUT/classpath.txt" >/dev/null
  fi
}

# commands_teardown: stops the Kafka broker commands_setup started, if it did
commands_teardown() {
  [[ "${COMMANDS_SCENARIOS:-}" == *" kafka-commands "* ]] && KAFKA_PORT=$KAFKA_BENCH_PORT KAFKA_DIR=$OUT/kafka bash .ci/kafka stop >/dev/null 2>&1 || true
}

# commands_run COUNT RUN: publishes COUNT commands to RabbitMQ and waits for their outcomes (bench/CommandLoad.java)
commands_run() {
  java -cp "$(cat "$OUT/classpath.txt")" bench/CommandLoad.java 5672 "$BROKER_VHOST" bench "$BROKER_PASSWORD" \
    "$OUT/accounts.txt" "$1" "$2" "$(( $(date +%s%N) / 1000 ))"
}

# kafka_commands_run COUNT RUN: produces COUNT commands to Kafka and waits for their outcomes (bench/KafkaCommandLoad.java)
kafka_commands_run() {
  java -cp "$(cat "$OUT/classpath.txt")" bench/KafkaCommandLoad.java "$KAFKA_BENCH" bench "$OUT/accounts.txt" "$1" "$2" \
    "$(( $(date +%s%N) / 1000 ))"
}
