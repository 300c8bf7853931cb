#!/usr/bin/env bash
# A CPU profile of the service under one wrk scenario at a time, and its CPU shares by layer
# (bench/shares.py). The packaged service is started as bench/run.sh starts it and seeded as it seeds;
# each scenario runs a warm-up, then async-profiler is loaded into the running JVM with "start"
# (bench/AttachAgent.java, the JDK's attach API), wrk runs the measured window, and the profiler is
# loaded again with "stop", which writes the window's stacks: the start and the JIT's warm-up stay out
# of the profile. Then shares.py prints the table.
#
#   bash bench/profile.sh [SCENARIO...]        replays, reads, new-payments, transfers, hot-account, inflight,
#                                              commands, kafka-commands
#                                              (default: replays reads new-payments)
#
# commands and kafka-commands are bench/run.sh's: PROFILE_COMMANDS (20000) commands published to RabbitMQ, or
# produced to the benchmark's own Kafka broker, by bench/CommandLoad.java or KafkaCommandLoad.java, which wait for
# every outcome; the profile is the window of one such run, after runs of PROFILE_COMMANDS_WARMUP (three times as many) first.
#
# Output, per scenario: target/profile/SCENARIO.collapsed (async-profiler's collapsed stacks, one thread
# name as each stack's root frame), SCENARIO.shares.txt (the table), SCENARIO.wrk.txt (wrk's line).
# Settings (environment): PROFILE_DURATION (15s, the profiled window), PROFILE_WARMUP (10s: one such run
# of every scenario first, and one before each profile), PROFILE_CONNS (64; wrk runs 2 threads),
# PROFILE_EVENT (cpu: perf_events where the kernel allows them; async-profiler's warnings, printed at the
# end, say what it did otherwise), PROFILE_INTERVAL (1ms of CPU time between samples), PROFILE_JAVA_OPTS (the service's JVM
# options; default bench/run.sh's: none, the JVM's defaults; -XX:+DebugNonSafepoints is
# added, so that inlined frames are attributed to their own methods), PROFILE_PORT (8198), stores
# BENCH_DB (ledger_bench_profile, dropped and created) and BENCH_REDIS_DB (8, flushed),
# PROFILE_ASYNC_PROFILER (4.6: tools.profiler:async-profiler from Maven Central, fetched with ./mvnw
# dependency:copy, its linux-x64 library extracted once per machine into ~/.cache/ledger-async-profiler/).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

if [ $# -gt 0 ]; then SCENARIOS=("$@"); else SCENARIOS=(replays reads new-payments); fi
DURATION=${PROFILE_DURATION:-15s}
WARMUP=${PROFILE_WARMUP:-10s}
CONNS=${PROFILE_CONNS:-64}
EVENT=${PROFILE_EVENT:-cpu}
INTERVAL=${PROFILE_INTERVAL:-1ms}
JAVA_OPTS=${PROFILE_JAVA_OPTS-""}
PORT=${PROFILE_PORT:-8198}
DB=${BENCH_DB:-ledger_bench_profile}
REDIS_DB=${BENCH_REDIS_DB:-8}
VERSION=${PROFILE_ASYNC_PROFILER:-4.6}
OUT=target/profile
BASE="http://127.0.0.1:$PORT"
mkdir -p "$OUT"
COMMANDS=${PROFILE_COMMANDS:-20000}
# three times the profiled run: with a tenth, C2 was still compiling the command path through the window (43 % of
# the samples on its thread, against 2.5 % for new payments after wrk's warm-up); with as many, it was still compiling the Kafka client (44 %)
COMMANDS_WARMUP=${PROFILE_COMMANDS_WARMUP:-$((3 * COMMANDS))}
is_commands() { [ "$1" = commands ] || [ "$1" = kafka-commands ]; }
for s in "${SCENARIOS[@]}"; do is_commands "$s" || scenario_args "$s" x "$CONNS" "$OUT" >/dev/null; done

install_missing wrk:wrk curl:curl unzip:unzip python3:python3
bash .ci/services >/dev/null
[ -f target/quarkus-app/quarkus-run.jar ] || ./mvnw -q -B package -DskipTests

# async-profiler's library, once per machine: the jar from Maven Central (through the local repository)
AGENT=$HOME/.cache/ledger-async-profiler/$VERSION/libasyncProfiler.so
if [ ! -f "$AGENT" ]; then
  ./mvnw -q -B dependency:copy -Dartifact="tools.profiler:async-profiler:$VERSION" -DoutputDirectory="$OUT/async-profiler"
  mkdir -p "$(dirname "$AGENT")"
  unzip -p "$OUT/async-profiler/async-profiler-$VERSION.jar" linux-x64/libasyncProfiler.so > "$AGENT.part"
  mv "$AGENT.part" "$AGENT"
fi

fresh_stores
new_api_key
commands_setup "${SCENARIOS[*]}"
# shellcheck disable=SC2086
launch java target/quarkus-app/quarkus-run.jar "$PORT" "$OUT/service.log" $JAVA_OPTS \
  -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints
APP=$!
trap 'kill $APP 2>/dev/null || true; wait $APP 2>/dev/null || true; commands_teardown' EXIT
wait_ready $APP "$PORT" "$OUT/service.log"
seed_accounts "$BASE" "$OUT" 1000 2000
if [[ " ${SCENARIOS[*]} " == *" transfers "* || " ${SCENARIOS[*]} " == *" hot-account "* ]]; then seed_transfers "$BASE" "$OUT"; fi

profiler() { java bench/AttachAgent.java "$APP" "$AGENT" "$1"; }
run_wrk() { # scenario phase duration: wrk, or the commands' load (PROFILE_COMMANDS_WARMUP of them to warm up)
  local -a args
  if is_commands "$1"; then
    local send=commands_run count=$COMMANDS
    [ "$1" = kafka-commands ] && send=kafka_commands_run
    [ "$2" = warmup ] && count=$COMMANDS_WARMUP
    "$send" "$count" "profile-$1-$RANDOM$RANDOM"
    return
  fi
  read -r -a args <<< "$(scenario_args "$1" "profile-$1-$RANDOM$RANDOM" "$CONNS" "$OUT")"
  wrk_load "$BASE" "$2" "$3" "$CONNS" "${args[@]}"
}
# every path compiled before the first profile
for s in "${SCENARIOS[@]}"; do run_wrk "$s" warmup "$WARMUP" > /dev/null; done
for s in "${SCENARIOS[@]}"; do
  run_wrk "$s" warmup "$WARMUP" > /dev/null
  rm -f "$OUT/$s.collapsed"
  profiler "start,event=$EVENT,interval=$INTERVAL,threads"
  before=$(cpu_ticks $APP)
  run_wrk "$s" measure "$DURATION" | grep '^BENCH' > "$OUT/$s.wrk.txt"
  after=$(cpu_ticks $APP)
  profiler "stop,threads,collapsed,file=$PWD/$OUT/$s.collapsed"
  line=$(cat "$OUT/$s.wrk.txt")
  {
    if is_commands "$s"; then
      echo "$s: $(field_of "$line" outcomes) outcomes of $COMMANDS commands, service CPU" \
        "$(ms_per $(( after - before )) "$(field_of "$line" outcomes)" 4) ms/command (profiler on); event $EVENT every $INTERVAL," \
        "JVM options: ${JAVA_OPTS:-none}"
    else
      echo "$s: $(printf '%.0f' "$(field_of "$line" rps)") req/s, p99 $(field_of "$line" p99_ms) ms, service CPU" \
        "$(ms_per $(( after - before )) "$(field_of "$line" requests)" 4) ms/req (profiler on), statuses $(field_of "$line" statuses);" \
        "$CONNS connections, $DURATION, event $EVENT every $INTERVAL, JVM options: ${JAVA_OPTS:-none}"
    fi
    python3 bench/shares.py "$OUT/$s.collapsed"
  } | tee "$OUT/$s.shares.txt"
done
# what async-profiler said (the event it fell back to, if any) is in the service's log
grep -E '^\[(WARN|ERROR)\]' "$OUT/service.log" | sort -u || true
