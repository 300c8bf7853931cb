#!/usr/bin/env bash
# The benchmark: the packaged application against local PostgreSQL and Redis, side by side with
# this machine's limits for the same work. One command: `bash bench/run.sh`. Not a test: it
# asserts nothing; it prints a table (also written to target/bench/results.md).
#
# Settings (environment): BENCH_CONNECTIONS ("16 64"), BENCH_DURATION (15s), BENCH_WARMUP (5s),
# BENCH_FIRST_WARMUP (20s: each HTTP scenario's run in the first round, before any measurement),
# BENCH_ACCOUNTS (1000), BENCH_REPLAY_KEYS (2000), BENCH_PORT (8099),
# BENCH_SCENARIOS ("new-payments transfers hot-account replays inflight reads commands kafka-commands events balanced"), BENCH_COMMANDS
# (20000: commands published per run of the commands scenarios), BENCH_COMMANDS_WARMUP (three times as many, about as long as an
# HTTP scenario's first warm-up: commands sent before each measured run and in the first round), BENCH_KAFKA_PORT (19392: the benchmark's own
# Kafka broker, .ci/kafka, for kafka-commands), BENCH_LIMITS (1; 0 skips the limits: the table without them),
# BENCH_JAVA_OPTS (JVM options of the service; default below; empty for the JVM's defaults).
# BENCH_AOT (1; 0 skips the start-time figure with the AOT cache of bench/aot-cache.sh),
# BENCH_STARTS (1; 0 skips the start-to-ready figures altogether). BENCH_ECHO_ACK (single; "multiple": BrokerEcho
# acknowledges the commands a confirm settled with one basicAck when they are the oldest pending).
# The scenario "events" (the outbox's cost: new payments with events on against off, and the relay's
# rate): BENCH_AB_ROUNDS (3), BENCH_DRAIN_EVENTS (100000), BENCH_RABBITMQ_VHOST (ledger-bench).
# Names of the benchmark's own stores: BENCH_DB (ledger_bench), BENCH_REDIS_DB (3).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

CONNECTIONS=${BENCH_CONNECTIONS:-"16 64"}
DURATION=${BENCH_DURATION:-15s}
WARMUP=${BENCH_WARMUP:-5s}
FIRST_WARMUP=${BENCH_FIRST_WARMUP:-20s}
ACCOUNTS=${BENCH_ACCOUNTS:-1000}
REPLAY_KEYS=${BENCH_REPLAY_KEYS:-2000}
PORT=${BENCH_PORT:-8099}
SCENARIOS=${BENCH_SCENARIOS:-"new-payments transfers hot-account replays inflight reads commands kafka-commands events balanced"}
COMMANDS=${BENCH_COMMANDS:-20000}
# Commands sent to warm up before each commands scenario is measured (and in the first round): three times a measured
# run, about as long as an HTTP scenario's first warm-up. A tenth of a run left C2 compiling the command path through
# the measured window (43 % of a profile's samples); as many as a run left it compiling the Kafka client (44 %,
# docs/performance.md).
COMMANDS_WARMUP=${BENCH_COMMANDS_WARMUP:-$((3 * COMMANDS))}
# None by default: the service as docs/operations.md starts it (`java -jar`), the JVM's own choices. The
# collector made no difference beyond noise to the CPU per request here (docs/performance.md); a bounded heap,
# e.g. "-Xms64m -Xmx160m -XX:+UseSerialGC", keeps the RSS under 300 MB where the defaults let it grow.
BENCH_JAVA_OPTS=${BENCH_JAVA_OPTS-""}
DB=${BENCH_DB:-ledger_bench}
REDIS_DB=${BENCH_REDIS_DB:-3}
THREADS=2
OUT=target/bench
BASE="http://127.0.0.1:$PORT"
mkdir -p "$OUT"

# --- tools and services ---------------------------------------------------------------------
install_missing wrk:wrk pgbench:postgresql-client redis-benchmark:redis-tools curl:curl
bash .ci/services >/dev/null
[ -f target/quarkus-app/quarkus-run.jar ] || ./mvnw -q -B package -DskipTests

psql() { command psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
fresh_stores

# --- the service ----------------------------------------------------------------------------
new_api_key
commands_setup "$SCENARIOS"
start_ns=$(date +%s%N)
# shellcheck disable=SC2086
launch java target/quarkus-app/quarkus-run.jar "$PORT" "$OUT/app.log" ${BENCH_JAVA_OPTS:-}
APP=$!
trap 'kill $APP 2>/dev/null || true; wait $APP 2>/dev/null || true; commands_teardown' EXIT
wait_ready $APP "$PORT" "$OUT/app.log"
ready_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))

# --- seed through the API ---------------------------------------------------------------------
seed_accounts "$BASE" "$OUT" "$ACCOUNTS" "$REPLAY_KEYS"
# the transfers' funds and the hot account's source
if [[ " $SCENARIOS " == *" transfers "* || " $SCENARIOS " == *" hot-account "* ]]; then seed_transfers "$BASE" "$OUT"; fi

# --- the scenarios ------------------------------------------------------------------------------
# the whole machine's busy time (user, nice, system, irq, softirq), in the same clock ticks: the
# service, wrk, Redis, PostgreSQL and the kernel's loopback TCP together
machine_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
RUN=$(date +%s)
declare -A RESULT
# wrk_run PHASE DURATION CONNS LUA ARGS...: one wrk run; the Lua script prints its BENCH line when measuring
wrk_run() { wrk_load "${WRK_BASE:-$BASE}" "$@"; }
scenario() { # name conns lua args...
  local name=$1 conns=$2 lua=$3; shift 3
  wrk_run warmup "$WARMUP" "$conns" "$lua" "$@" > /dev/null
  local before; before=$(cpu_ticks $APP)
  local machine_before; machine_before=$(machine_ticks)
  local pg_before; pg_before=$(pg_ticks)
  local wal_before maintenance_before; read -r -a wal_before <<< "$(pg_wal)"; maintenance_before=$(pg_maintenance)
  wrk_run measure "$DURATION" "$conns" "$lua" "$@" > "$OUT/$name-$conns.txt"
  local after; after=$(cpu_ticks $APP)
  local machine_after; machine_after=$(machine_ticks)
  local pg_after; pg_after=$(pg_ticks)
  local wal_after maintenance_after; read -r -a wal_after <<< "$(pg_wal)"; maintenance_after=$(pg_maintenance)
  local line; line=$(grep '^BENCH' "$OUT/$name-$conns.txt")
  local requests; requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<< "$line")
  RESULT[$name-$conns]="$line cpu_ms_per_req=$(ms_per $(( after - before )) "$requests")"
  RESULT[$name-$conns]+=" machine_cpu_ms_per_req=$(ms_per $(( machine_after - machine_before )) "$requests")"
  RESULT[$name-$conns]+=" pg_cpu_ms_per_req=$(ms_per $(( pg_after - pg_before )) "$requests")"
  # what PostgreSQL wrote to its WAL per request, the full-page images among it, and the autovacuum runs
  # during the measurement: the work a request leaves behind it (diagnostics, not in the table)
  RESULT[$name-$conns]+=" wal_bytes_per_req=$(per $(( wal_after[0] - wal_before[0] )) "$requests" 0)"
  RESULT[$name-$conns]+=" wal_fpi_per_req=$(per $(( wal_after[1] - wal_before[1] )) "$requests")"
  RESULT[$name-$conns]+=" autovacuums=$(( maintenance_after - maintenance_before ))"
  echo "$name @$conns: ${RESULT[$name-$conns]}"
}
# commands_scenario NAME RUN-FUNCTION CONNS [warm-up-only]: the same measure as scenario(), for
# commands instead of wrk: RUN-FUNCTION (commands_run for RabbitMQ, kafka_commands_run for Kafka)
# sends COMMANDS commands and waits for their outcomes; NAME is the result's name
commands_scenario() {
  local name=$1 send=$2 c=$3 run="$RUN-$1-$3${4:+-jit}"
  "$send" "$COMMANDS_WARMUP" "$run-warm" > /dev/null
  [ "${4:-}" = warm-up-only ] && return
  local before; before=$(cpu_ticks $APP)
  local pg_before; pg_before=$(pg_ticks)
  "$send" "$COMMANDS" "$run" > "$OUT/$name-$c.txt"
  local after; after=$(cpu_ticks $APP)
  local pg_after; pg_after=$(pg_ticks)
  local line; line=$(grep '^BENCH' "$OUT/$name-$c.txt")
  local outcomes; outcomes=$(field_of "$line" outcomes)
  # the machine's CPU over the load program's timed window (its own JVM start left out)
  RESULT[$name-$c]="$line p50_ms=- p99_ms=- cpu_ms_per_req=$(ms_per $(( after - before )) "$outcomes")"
  RESULT[$name-$c]+=" machine_cpu_ms_per_req=$(ms_per "$(field_of "$line" machine_ticks)" "$outcomes")"
  RESULT[$name-$c]+=" pg_cpu_ms_per_req=$(ms_per $(( pg_after - pg_before )) "$outcomes")"
  echo "$name: ${RESULT[$name-$c]}"
}
# run_scenario NAME CONNS [warm-up-only]: the scenario with its Lua script and arguments
run_scenario() {
  local s=$1 c=$2 args
  if [ "$s" = commands ]; then
    commands_scenario commands commands_run "$c" "${3:-}"
    return
  fi
  if [ "$s" = kafka-commands ]; then
    commands_scenario kafka-commands kafka_commands_run "$c" "${3:-}"
    return
  fi
  # the run id in every fresh key: the warm-up round's keys differ from the measured runs'
  local run="$RUN-$c${3:+-jit}"
  read -r -a args <<< "$(scenario_args "$s" "$run" "$c" "$OUT")"
  [ ${#args[@]} -gt 0 ] || exit 1
  if [ "${3:-}" = warm-up-only ]; then
    wrk_run warmup "$FIRST_WARMUP" "$c" "${args[@]}" > /dev/null
  else
    scenario "$s" "$c" "${args[@]}"
  fi
}
# One round of every scenario first, so that the JIT has compiled every path before the first
# measurement (without it the first scenario measured a JVM still compiling: twice its CPU per request).
# 20 s each: new payments measured alone after 5 s of it still had the JIT compiling, at 0.190 ms of the
# service's CPU per payment against 0.096 after 20 s (2026-11-27).
# "events" runs apart, below: it needs a second instance
TABLE_SCENARIOS=$(tr ' ' '\n' <<< "$SCENARIOS" | grep -vxE 'events|balanced' | paste -sd' ' || true)
for s in $TABLE_SCENARIOS; do run_scenario "$s" "${CONNECTIONS%% *}" warm-up-only; done
for c in $CONNECTIONS; do
  for s in $TABLE_SCENARIOS; do run_scenario "$s" "$c"; done
done

# --- events: new payments with the outbox on against off, and the relay's rate -----------------------
# A second instance with events on (same database, accounts and API key) beside the first, which has
# them off; RabbitMQ gets a durable queue bound to ledger.events and a consumer that takes the events as
# they arrive (bench/EventsQueue.java), as for a real consumer. The two alternate, off then on, BENCH_AB_ROUNDS times per connection count, each run
# after its own warm-up, so that both meet the same state of the machine. Then the relay's own rate:
# the last BENCH_DRAIN_EVENTS events are marked unpublished again, and the relay publishes them anew.
EVENTS_TABLE=""
if [[ " $SCENARIOS " == *" events "* ]]; then
  VHOST=${BENCH_RABBITMQ_VHOST:-ledger-bench}
  AB_ROUNDS=${BENCH_AB_ROUNDS:-3}
  events_queue() { java -cp "target/quarkus-app/lib/main/*" bench/EventsQueue.java "$1" "$VHOST" ledger-bench-events 2>/dev/null; }
  unpublished() { psql -d $DB -c "SELECT count(*) FROM outbox_events WHERE published_at IS NULL"; }
  as_root rabbitmqctl -q add_vhost "$VHOST" >/dev/null 2>&1 || true
  as_root rabbitmqctl -q set_permissions -p "$VHOST" guest '.*' '.*' '.*'
  events_queue declare
  java -cp "target/quarkus-app/lib/main/*" bench/EventsQueue.java consume "$VHOST" ledger-bench-events 2>/dev/null &
  CONSUMER=$!
  PORT_ON=$(( PORT + 2 ))
  BASE_ON="http://127.0.0.1:$PORT_ON"
  # shellcheck disable=SC2086
  LEDGER_EVENTS_RABBITMQ_ENABLED=true RABBITMQ_HOST=127.0.0.1 RABBITMQ_VIRTUAL_HOST="$VHOST" \
    launch java target/quarkus-app/quarkus-run.jar "$PORT_ON" "$OUT/app-events.log" ${BENCH_JAVA_OPTS:-}
  APP_ON=$!
  trap 'kill $APP $APP_ON $CONSUMER 2>/dev/null || true; wait $APP $APP_ON $CONSUMER 2>/dev/null || true' EXIT
  wait_ready $APP_ON "$PORT_ON" "$OUT/app-events.log"
  WRK_BASE=$BASE_ON wrk_run warmup "$WARMUP" "${CONNECTIONS%% *}" new-payments.lua "$RUN-on-jit" "$THREADS" "$OUT/accounts.txt" > /dev/null
  declare -A AB
  for c in $CONNECTIONS; do
    for r in $(seq 1 "$AB_ROUNDS"); do
      for side in off on; do
        if [ $side = on ]; then pid=$APP_ON; base=$BASE_ON; else pid=$APP; base=$BASE; fi
        WRK_BASE=$base wrk_run warmup "$WARMUP" "$c" new-payments.lua "$RUN-$c-$side-$r-warm" "$THREADS" "$OUT/accounts.txt" > /dev/null
        before=$(cpu_ticks $pid); machine_before=$(machine_ticks)
        WRK_BASE=$base wrk_run measure "$DURATION" "$c" new-payments.lua "$RUN-$c-$side-$r" "$THREADS" "$OUT/accounts.txt" \
          > "$OUT/events-$side-$c-$r.txt"
        after=$(cpu_ticks $pid); machine_after=$(machine_ticks)
        line=$(grep '^BENCH' "$OUT/events-$side-$c-$r.txt")
        requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<< "$line")
        # the relay's CPU counts towards the on instance's: it is the outbox's cost too
        AB[$side-$c-$r]="$line cpu_ms_per_req=$(ms_per $(( after - before )) "$requests") machine_cpu_ms_per_req=$(ms_per $(( machine_after - machine_before )) "$requests")"
        [ $side = on ] && AB[$side-$c-$r]+=" backlog=$(unpublished)"
        echo "events $side @$c round $r: ${AB[$side-$c-$r]}"
      done
    done
  done
  # The relay's rate: a backlog of events already published, published again.
  until [ "$(unpublished)" = 0 ]; do sleep 0.2; done
  relay_metric() { curl -s "$BASE_ON/q/metrics" | awk -v m="$1" '$1 == m { printf "%d", $2 }'; }
  MEAN_BATCH="During the runs the relay published $(relay_metric 'ledger_events_published_total{broker="rabbitmq"}') events in"
  MEAN_BATCH+=" $(relay_metric 'ledger_events_relay_rounds_total{broker="rabbitmq"}') rounds (a round: one transaction, one batch, one wait for confirms)."
  # owed to RabbitMQ again: unpublished, and a delivery each (V4__event_destinations.sql)
  drain=$(psql -d $DB -c "WITH again AS (UPDATE outbox_events SET published_at = NULL, undelivered = 1 WHERE position IN
    (SELECT position FROM outbox_events ORDER BY position DESC LIMIT ${BENCH_DRAIN_EVENTS:-100000}) RETURNING position, account_id),
    owed AS (INSERT INTO outbox_deliveries (destination, position, account_id) SELECT 'rabbitmq', position, account_id FROM again
    RETURNING 1) SELECT count(*) FROM owed")
  # timed from the relay's first batch (it finds them at its next poll) to the last
  until [ "$(unpublished)" -lt "$drain" ]; do sleep 0.02; done
  t0=$(date +%s%N); left=$(unpublished); machine_before=$(machine_ticks); before=$(cpu_ticks $APP_ON)
  until [ "$(unpublished)" = 0 ]; do sleep 0.05; done
  t1=$(date +%s%N); machine_after=$(machine_ticks); after=$(cpu_ticks $APP_ON)
  DRAIN="The relay published $left events (of $drain marked unpublished again) in $(( (t1 - t0) / 1000000 )) ms:"
  DRAIN+=" $(awk -v n="$left" -v ns=$(( t1 - t0 )) 'BEGIN { printf "%.0f", n / (ns / 1e9) }') events/s, the instance's CPU"
  DRAIN+=" $(ms_per $(( after - before )) "$left") ms per event, the machine's $(ms_per $(( machine_after - machine_before )) "$left") ms"
  DRAIN+=" (batches of up to 500, each claimed, published with confirms to a durable queue with a consumer, and marked, in one transaction)."
  echo "$DRAIN"
  rss_on_mb=$(awk '/VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$APP_ON/status")
  blocked_on=$(grep -c 'has been blocked' "$OUT/app-events.log" || true)
  kill $APP_ON $CONSUMER; wait $APP_ON $CONSUMER 2>/dev/null || true
  events_queue delete
  # abfield SIDE-CONNS-ROUND KEY
  abfield() { field_of "${AB[$1]}" "$2"; }
  EVENTS_TABLE=$({
    echo "| conns | round | events off: req/s | events on: req/s | on / off | CPU ms/req off | on | machine CPU ms/req off | on | unpublished after the on run |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for c in $CONNECTIONS; do
      for r in $(seq 1 "$AB_ROUNDS"); do
        printf "| %s | %s | %.0f | %.0f | %s | %s | %s | %s | %s | %s |\n" "$c" "$r" "$(abfield off-$c-$r rps)" "$(abfield on-$c-$r rps)" \
          "$(awk -v a="$(abfield on-$c-$r rps)" -v b="$(abfield off-$c-$r rps)" 'BEGIN { printf "%.2f", a / b }')" \
          "$(abfield off-$c-$r cpu_ms_per_req)" "$(abfield on-$c-$r cpu_ms_per_req)" \
          "$(abfield off-$c-$r machine_cpu_ms_per_req)" "$(abfield on-$c-$r machine_cpu_ms_per_req)" "$(abfield on-$c-$r backlog)"
      done
      for key in rps cpu_ms_per_req machine_cpu_ms_per_req; do
        for side in off on; do
          declare "m_${side}_$key=$(for r in $(seq 1 "$AB_ROUNDS"); do abfield $side-$c-$r $key; done | median_of)"
        done
      done
      printf "| %s | median | %.0f | %.0f | %s | %.3f | %.3f | %.3f | %.3f | |\n" "$c" "$m_off_rps" "$m_on_rps" \
        "$(awk -v a="$m_on_rps" -v b="$m_off_rps" 'BEGIN { printf "%.2f", a / b }')" \
        "$m_off_cpu_ms_per_req" "$m_on_cpu_ms_per_req" "$m_off_machine_cpu_ms_per_req" "$m_on_machine_cpu_ms_per_req"
    done
    echo
    echo "$MEAN_BATCH"
    echo "$DRAIN"
    echo "The events instance: RSS after the runs ${rss_on_mb} MB, Vert.x blocked-thread warnings ${blocked_on}."
  })
  echo "$EVENTS_TABLE" | tee "$OUT/events.md"
fi
rss_mb=$(awk '/VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$APP/status")
blocked=$(grep -c 'has been blocked' "$OUT/app.log" || true)
kill $APP; wait $APP 2>/dev/null || true

# --- balanced: one instance against two behind HAProxy (docs/scaling.md) -----------------------------
# Two sets started by .ci/balanced on the benchmark's stores: one instance behind HAProxy, and two
# instances behind another HAProxy. They alternate, one then two, BENCH_AB_ROUNDS times per connection
# count and scenario (new payments, replays), each run after its own warm-up. The CPU per request
# counts every instance of the set and its HAProxy; on two shared cores a second instance cannot add
# throughput, so the CPU per request is the comparison that means something.
BALANCED_TABLE=""
if [[ " $SCENARIOS " == *" balanced "* ]]; then
  AB_ROUNDS=${BENCH_AB_ROUNDS:-3}
  # balanced PORT COUNT start|stop: .ci/balanced with the benchmark's stores and JVM options
  balanced() {
    env -u LEDGER_MESSAGING_RABBITMQ_ENABLED -u LEDGER_EVENTS_RABBITMQ_ENABLED \
      QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://127.0.0.1:5432/$DB" \
      QUARKUS_DATASOURCE_JDBC_URL="jdbc:postgresql://127.0.0.1:5432/$DB" QUARKUS_DATASOURCE_USERNAME=postgres \
      QUARKUS_REDIS_HOSTS="redis://127.0.0.1:6379/$REDIS_DB" LEDGER_API_KEYS="$API_KEYS" \
      BALANCED_PORT="$1" BALANCED_INSTANCES="$2" BALANCED_DIR="$PWD/$OUT/balanced-$2" BALANCED_JAVA_OPTS="${BENCH_JAVA_OPTS:-}" \
      bash .ci/balanced "$3" > /dev/null
  }
  # set_ticks COUNT: the CPU ticks so far of the set's instances and its HAProxy
  set_ticks() {
    local total=0 pidfile
    for pidfile in "$PWD/$OUT/balanced-$1"/instance-*.pid "$PWD/$OUT/balanced-$1/haproxy.pid"; do
      total=$(( total + $(cpu_ticks "$(cat "$pidfile")") ))
    done
    echo $total
  }
  # balanced_args SCENARIO RUN: the Lua script and its arguments (no spaces in any)
  balanced_args() {
    case $1 in
      new-payments) echo "new-payments.lua $2 $THREADS $OUT/accounts.txt" ;;
      replays) echo "replays.lua $OUT/replays.txt" ;;
    esac
  }
  declare -A SET_PORT=([1]=$(( PORT + 10 )) [2]=$(( PORT + 20 )))
  trap 'balanced ${SET_PORT[1]} 1 stop || true; balanced ${SET_PORT[2]} 2 stop || true' EXIT
  balanced "${SET_PORT[1]}" 1 start
  balanced "${SET_PORT[2]}" 2 start
  # one longer warm-up per set and scenario first: each instance of the two gets half the requests
  for n in 1 2; do
    for s in new-payments replays; do
      WRK_BASE="http://127.0.0.1:${SET_PORT[$n]}" wrk_run warmup "$(( ${WARMUP%s} * 2 ))s" "${CONNECTIONS%% *}" \
        $(balanced_args $s "$RUN-balanced-$n-jit") > /dev/null
    done
  done
  declare -A BAL
  for c in $CONNECTIONS; do
    for s in new-payments replays; do
      for r in $(seq 1 "$AB_ROUNDS"); do
        for n in 1 2; do
          base="http://127.0.0.1:${SET_PORT[$n]}"
          WRK_BASE=$base wrk_run warmup "$WARMUP" "$c" $(balanced_args $s "$RUN-$c-balanced-$n-$r-warm") > /dev/null
          before=$(set_ticks $n); machine_before=$(machine_ticks)
          WRK_BASE=$base wrk_run measure "$DURATION" "$c" $(balanced_args $s "$RUN-$c-balanced-$n-$r") > "$OUT/balanced-$s-$n-$c-$r.txt"
          after=$(set_ticks $n); machine_after=$(machine_ticks)
          line=$(grep '^BENCH' "$OUT/balanced-$s-$n-$c-$r.txt")
          requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<< "$line")
          BAL[$s-$n-$c-$r]="$line cpu_ms_per_req=$(ms_per $(( after - before )) "$requests") machine_cpu_ms_per_req=$(ms_per $(( machine_after - machine_before )) "$requests")"
          echo "balanced $s, $n instance(s) @$c round $r: ${BAL[$s-$n-$c-$r]}"
        done
      done
    done
  done
  balanced "${SET_PORT[1]}" 1 stop; balanced "${SET_PORT[2]}" 2 stop
  trap - EXIT
  balfield() { field_of "${BAL[$1]}" "$2"; }
  BALANCED_TABLE=$({
    echo "| scenario | conns | one: req/s | two: req/s | two / one | CPU ms/req one | two | machine CPU ms/req one | two | expected answers one | two |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for c in $CONNECTIONS; do
      for s in new-payments replays; do
        for key in rps cpu_ms_per_req machine_cpu_ms_per_req expected_share; do
          for n in 1 2; do
            declare "m_${n}_$key=$(for r in $(seq 1 "$AB_ROUNDS"); do balfield "$s-$n-$c-$r" $key; done | median_of)"
          done
        done
        printf "| %s | %s | %.0f | %.0f | %s | %.3f | %.3f | %.3f | %.3f | %s | %s |\n" "$s" "$c" "$m_1_rps" "$m_2_rps" \
          "$(awk -v a="$m_2_rps" -v b="$m_1_rps" 'BEGIN { printf "%.2f", a / b }')" "$m_1_cpu_ms_per_req" "$m_2_cpu_ms_per_req" \
          "$m_1_machine_cpu_ms_per_req" "$m_2_machine_cpu_ms_per_req" "$m_1_expected_share" "$m_2_expected_share"
      done
    done
    echo
    echo "Medians of $AB_ROUNDS alternating rounds; the CPU per request counts the set's instances and its HAProxy."
  })
  echo "$BALANCED_TABLE" | tee "$OUT/balanced.md"
fi

# --- start to ready, the schema already migrated: three starts each ----------------------------------
# The archive and the cache are built first; then the three ways start in turn, three rounds, so that
# each meets the same state of the machine (PostgreSQL's checkpoints after the load and the builds).
# start_once JAVA JAR [JVM options...]: one start to ready, in ms
start_once() {
  local java=$1 jar=$2; shift 2
  local t0 pid; t0=$(date +%s%N)
  launch "$java" "$jar" $(( PORT + 1 )) "$OUT/start.log" "$@"
  pid=$!
  wait_ready $pid $(( PORT + 1 )) "$OUT/start.log" || { kill $pid 2>/dev/null; return 1; }
  echo $(( ($(date +%s%N) - t0) / 1000000 ))
  kill $pid; wait $pid 2>/dev/null || true
}
# shellcheck disable=SC2086
start_fast() { start_once java target/quarkus-app/quarkus-run.jar ${BENCH_JAVA_OPTS:-}; }
# shellcheck disable=SC2086
start_cds() { start_once java target/cds/quarkus-run.jar ${BENCH_JAVA_OPTS:-} -XX:SharedArchiveFile=target/cds/app.jsa; }
# shellcheck disable=SC2086
start_aot() { start_once "$aot_java" target/aot/quarkus-run.jar ${BENCH_JAVA_OPTS:-} -XX:AOTCache=target/aot/app.aot -Xlog:aot=off; }
# median WAY: the median of the three starts of a way, then all three in brackets
median() {
  local -n times=$1
  echo "$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p) ms [$(printf '%s\n' "${times[@]}" | sort -n | paste -sd' ')]"
}
START="(Start-to-ready figures skipped: BENCH_STARTS=0.)"
if [ "${BENCH_STARTS:-1}" = "1" ]; then
ways=(fast)
# the same JDK, the aot-jar and the dynamic AppCDS archive of a training run (bench/cds-archive.sh)
CDS_JAVA_OPTS="${BENCH_JAVA_OPTS:-}" bash bench/cds-archive.sh > "$OUT/cds-archive.txt" 2>&1 && ways+=(cds)
# JDK 25+ with the AOT cache (bench/aot-cache.sh), where such a JDK is installed; BENCH_AOT=0 skips it
if [ "${BENCH_AOT:-1}" = "1" ] && AOT_JAVA_OPTS="${BENCH_JAVA_OPTS:-}" bash bench/aot-cache.sh > "$OUT/aot-cache.txt" 2>&1; then
  aot_java=$(sed -nE 's/^java: (.*)/\1/p' "$OUT/aot-cache.txt")
  ways+=(aot)
fi
declare -a times_fast=() times_cds=() times_aot=()
for _ in 1 2 3; do
  for way in "${ways[@]}"; do
    declare -n into=times_$way
    into+=("$("start_$way")")
    unset -n into
  done
done
START="Start to ready (median of 3, schema migrated, the ways in turn): $(median times_fast) with $(java -version 2>&1 | head -1) and the fast-jar."
if [ ${#times_cds[@]} -gt 0 ]; then
  START="$START $(median times_cds) with the same JDK, the aot-jar and its trained AppCDS archive (bench/cds-archive.sh)."
else
  START="$START (No AppCDS figure: see $OUT/cds-archive.txt.)"
fi
if [ ${#times_aot[@]} -gt 0 ]; then
  START="$START $(median times_aot) with $("$aot_java" -version 2>&1 | head -1), the aot-jar and its AOT cache (bench/aot-cache.sh)."
else
  START="$START (No AOT-cache figure: see $OUT/aot-cache.txt.)"
fi
fi
SERVICE="First start to ready (migrating an empty database): ${ready_ms} ms. $START RSS after the runs: ${rss_mb} MB. Vert.x blocked-thread warnings: ${blocked}. JVM options: ${BENCH_JAVA_OPTS:-none}."
echo "$SERVICE"

# --- this machine's limits for the same work --------------------------------------------------------
# BENCH_LIMITS=0: none measured, the table without them
LIMITS=${BENCH_LIMITS:-1}
declare -A LIMIT LIMIT_CPU LIMIT_SERVER_CPU
# The server the limits' clients talk to, for its own CPU per operation: the local Redis (a replay's
# Redis work is the server's script and socket, whoever the client is)
REDIS_PID=$(redis-cli -n $REDIS_DB INFO server | tr -d '\r' | awk -F: '$1 == "process_id" { print $2 }')
# limit KEY COMMAND...: runs the command, which prints its rate (operations/s), into LIMIT[KEY], the
# machine's CPU time per operation meanwhile into LIMIT_CPU[KEY], and Redis' own into LIMIT_SERVER_CPU[KEY]
limit() {
  local key=$1; shift
  local t0 m0 r0 rate; t0=$(date +%s%N); m0=$(machine_ticks); r0=$(cpu_ticks $REDIS_PID)
  rate=$("$@")
  LIMIT[$key]=$rate
  local ops; ops=$(awk -v r="$rate" -v ns=$(( $(date +%s%N) - t0 )) 'BEGIN { print r * ns / 1e9 }')
  LIMIT_CPU[$key]=$(ms_per $(( $(machine_ticks) - m0 )) "$ops")
  LIMIT_SERVER_CPU[$key]=$(ms_per $(( $(cpu_ticks $REDIS_PID) - r0 )) "$ops" 4)
}
pgbench_rate() { # script conns [pgbench options...]
  local script=$1 conns=$2; shift 2
  PGHOST=127.0.0.1 PGUSER=postgres pgbench -n -M prepared -c "$conns" -j $THREADS -T "${DURATION%s}" \
    -D naccounts=1000 "$@" -f "$script" $DB 2>/dev/null | awk '/^tps/ { printf "%.0f", $3 }'
}
evalsha_rate() { # conns: reserve.lua's arguments as the service sends them (fingerprint, owner, lease, path, now)
  redis-benchmark -n 300000 -c "$1" --threads $THREADS --dbnum $REDIS_DB -r 1000000 -q \
    EVALSHA "$SHA" 1 "bench:__rand_int__" fp owner 30000 /accounts 0 | tr '\r' '\n' \
    | grep -oE '[0-9.]+ requests per second' | tail -1 | awk '{ printf "%.0f", $1 }'
}
if [ "$LIMITS" = 1 ]; then
  psql -d $DB -f bench/pgbench-schema.sql >/dev/null
  SHA=$(redis-cli -n $REDIS_DB SCRIPT LOAD "$(cat src/main/resources/redis/reserve.lua)")
  for c in $CONNECTIONS; do
    limit pay-$c pgbench_rate bench/pgbench-payment.sql "$c"
    limit own-pay-$c pgbench_rate bench/pgbench-service-payment.sql "$c"
    # the transfers' limit: the service's own statement (the accounts funded by seed_transfers)
    if [[ " $SCENARIOS " == *" transfers "* ]]; then
      limit own-transfer-$c pgbench_rate bench/pgbench-service-transfer.sql "$c"
    fi
    if [[ " $SCENARIOS " == *" hot-account "* ]]; then
      limit own-hot-$c pgbench_rate bench/pgbench-service-hot-transfer.sql "$c" -D hot="$(cat "$OUT/hot-account.txt")"
    fi
    limit read-$c pgbench_rate bench/pgbench-read.sql "$c"
    limit evalsha-$c evalsha_rate "$c"
  done
fi
# The broker's own limit for the commands flow: bench/BrokerEcho.java does the service's message work
# (consume with the service's prefetch, ledger.messaging.rabbitmq.prefetch: 256, or LEDGER_MESSAGING_RABBITMQ_PREFETCH;
# publish the outcome with a confirm, ack after the confirm) without PostgreSQL and Redis, measured as the commands
# scenario is (bench/CommandLoad.java)
# broker_alone KEY RUN-FUNCTION SCENARIO TEXT ECHO-COMMAND...: the broker's own limit for a commands
# scenario: ECHO-COMMAND in the background does the door's message work while RUN-FUNCTION sends the
# commands and waits for their outcomes, as the scenario does; prints the sentence for the table
broker_alone() {
  local key=$1 run_fn=$2 scenario=$3 text=$4; shift 4
  "$@" > "$OUT/$key-echo.log" 2>&1 &
  local echo_pid=$!
  $run_fn $(( COMMANDS / 10 )) "$RUN-$key-echo-warm" > /dev/null
  local echo0; echo0=$(cpu_ticks $echo_pid)
  $run_fn "$COMMANDS" "$RUN-$key-echo" > "$OUT/$key-echo.txt"
  local echo_ticks=$(( $(cpu_ticks $echo_pid) - echo0 ))
  kill $echo_pid; wait $echo_pid 2>/dev/null || true
  local line; line=$(grep '^BENCH' "$OUT/$key-echo.txt")
  local rate; rate=$(awk -v r="$(field_of "$line" rps)" 'BEGIN { printf "%.0f", r }')
  local outcomes; outcomes=$(field_of "$line" outcomes)
  local sentence="$text: $rate/s ($(ms_per "$(field_of "$line" machine_ticks)" "$outcomes") machine ms per command, of which the echo process's own $(ms_per "$echo_ticks" "$outcomes" 4) ms)"
  for c in $CONNECTIONS; do
    sentence+="$(awk -v a="$(field_of "${RESULT[$scenario-$c]}" rps)" -v b="$rate" -v c="$c" -v s="$scenario" \
      'BEGIN { printf "; the %s scenario (its run with the %s-connection scenarios) %.2f of it", s, c, a / b }')"
  done
  echo "$sentence."
}
BROKER_LIMIT=""
if [ "$LIMITS" = 1 ] && [[ " $SCENARIOS " == *" commands "* ]]; then
  BROKER_LIMIT=$(broker_alone broker commands_run commands \
    "The broker alone for the commands flow (bench/BrokerEcho.java: consume, publish the outcome with a confirm, ack; no PostgreSQL, no Redis)" \
    java -cp "$(cat "$OUT/classpath.txt")" bench/BrokerEcho.java 5672 "$BROKER_VHOST" bench "$BROKER_PASSWORD" "${LEDGER_MESSAGING_RABBITMQ_PREFETCH:-256}" \
    "${BENCH_ECHO_ACK:-single}")
  echo "$BROKER_LIMIT"
fi
# Kafka's own limit for the same flow: bench/KafkaEcho.java consumes the commands, produces each outcome
# (acks=all, idempotent) and commits after the acknowledgements, without PostgreSQL and Redis. The
# service stops first (its consumer group would share the partitions): this is the last measure of it.
KAFKA_LIMIT=""
if [ "$LIMITS" = 1 ] && [[ " $SCENARIOS " == *" kafka-commands "* ]]; then
  kill $APP 2>/dev/null || true; wait $APP 2>/dev/null || true
  KAFKA_LIMIT=$(broker_alone kafka kafka_commands_run kafka-commands \
    "Kafka alone for the commands flow (bench/KafkaEcho.java: consume, produce the outcome with acks=all, commit; no PostgreSQL, no Redis)" \
    java -cp "$(cat "$OUT/classpath.txt")" bench/KafkaEcho.java "$KAFKA_BENCH" bench)
  echo "$KAFKA_LIMIT"
fi

# --- the table ------------------------------------------------------------------------------------
# field SCENARIO-CONNS KEY: the value of KEY=value in the scenario's result (whole keys only)
field() { field_of "${RESULT[$1]}" "$2"; }
{
  echo "| scenario | conns | req/s | p50 ms | p99 ms | expected answers | CPU ms/req | PostgreSQL CPU ms/req | machine CPU ms/req | limit (req/s) | ratio |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for c in $CONNECTIONS; do
    for s in $TABLE_SCENARIOS; do
      case $s in
        new-payments|commands|kafka-commands) key=pay-$c; what="pgbench payment, ${LIMIT_CPU[$key]:-} machine ms" ;;
        transfers) key=own-transfer-$c; what="pgbench of the service's transfer statement, ${LIMIT_CPU[$key]:-} machine ms" ;;
        hot-account) key=own-hot-$c; what="the same from the one account, ${LIMIT_CPU[$key]:-} machine ms" ;;
        replays) key=evalsha-$c; what="EVALSHA reserve, ${LIMIT_CPU[$key]:-} machine ms, ${LIMIT_SERVER_CPU[$key]:-} of them Redis'" ;;
        reads) key=read-$c; what="pgbench read, ${LIMIT_CPU[$key]:-} machine ms" ;;
        *) key="" ;;
      esac
      limit=${LIMIT[${key:-none}]:-}
      [ -n "$limit" ] || what=""
      rps=$(field "$s-$c" rps)
      ratio=$([ -n "$limit" ] && awk -v a="$rps" -v b="$limit" 'BEGIN { printf "%.2f", a / b }' || echo "-")
      printf "| %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$s" "$c" "$rps" "$(field "$s-$c" p50_ms)" \
        "$(field "$s-$c" p99_ms)" "$(field "$s-$c" expected_share)" "$(field "$s-$c" cpu_ms_per_req)" \
        "$(field "$s-$c" pg_cpu_ms_per_req)" "$(field "$s-$c" machine_cpu_ms_per_req)" \
        "${limit:--}${what:+ ($what)}" "$ratio"
    done
  done
  echo
  own=()
  for c in $CONNECTIONS; do
    share=""
    if [[ " $SCENARIOS " == *" new-payments "* ]]; then
      share=$(awk -v a="$(field "new-payments-$c" rps)" -v b="${LIMIT[own-pay-$c]:-0}" 'BEGIN { if (b > 0) printf ", new payments %.2f of it", a / b }')
    fi
    own+=("at $c connections ${LIMIT[own-pay-$c]:-}/s (${LIMIT_CPU[own-pay-$c]:-} machine ms)$share")
  done
  [ -n "$BROKER_LIMIT" ] && { echo "$BROKER_LIMIT"; echo; }
  [ -n "$KAFKA_LIMIT" ] && { echo "$KAFKA_LIMIT"; echo; }
  if [ "$LIMITS" = 1 ]; then
    echo "pgbench of the service's own payment statement (bench/pgbench-service-payment.sql, one call of ledger_post_transaction_checked_with_holds): $(IFS=';'; echo "${own[*]}" | sed 's/;/; /g')."
    echo
  fi
  echo "$SERVICE"
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo), $(java -version 2>&1 | head -1)."
  if [ -n "$BALANCED_TABLE" ]; then
    echo
    echo "Balanced: one instance against two, each set behind its own HAProxy (.ci/balanced), alternating:"
    echo
    echo "$BALANCED_TABLE"
  fi
  if [ -n "$EVENTS_TABLE" ]; then
    echo
    echo "Events: new payments with the outbox off and on, alternating (the on instance's CPU includes its relay):"
    echo
    echo "$EVENTS_TABLE"
  fi
} | tee "$OUT/results.md"
