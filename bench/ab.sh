#!/usr/bin/env bash
# A/B of two commits in one run: each commit packaged in a git worktree of its own (target/ab/a and
# target/ab/b), both started side by side as the README starts the jar (each on its own database and
# Redis database), then alternated round by round under the same load: replays, reads and new
# payments at AB_CONNS connections. Prints each round's requests, CPU per request of the instance (from
# /proc), rate, p99 and statuses, then the median CPU per request of each side per scenario.
#
#   bash bench/ab.sh REF_A REF_B        e.g. bash bench/ab.sh c2acb01 HEAD
#
# The two idempotency stores, A/B in one run (the same commit twice, each side with its own store):
#   AB_STORE_A=redis AB_STORE_B=dynamodb bash bench/ab.sh HEAD HEAD
# A side with AB_STORE_x=dynamodb uses a dynalite of the benchmark's own (.ci/dynalite on AB_DYNALITE_PORT,
# default 18702, started afresh), a table per side. dynalite is a Node.js stand-in on this machine: its
# figures are not DynamoDB's (docs/dynamodb.md); what the run shows is the service's CPU per request with
# each store, and the emulator's own limit alone (conditional puts per second, below the table).
#
# One commit with tracing off and on (an OTLP endpoint set on side B, exporting to a sink of the benchmark's
# own, bench/otlp-sink.py on AB_OTLP_SINK_PORT):
#   AB_OTLP_SINK_PORT=18718 AB_ENV_B="QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:18718 \
#     QUARKUS_OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf" bash bench/ab.sh HEAD HEAD
# AB_ENV_A, AB_ENV_B: NAME=value pairs (space-separated) added to that side's environment.
#
# The JVM's collector, A/B on one commit (JVM options per side):
#   AB_JAVA_OPTS_A="" AB_JAVA_OPTS_B="-XX:+UseSerialGC" bash bench/ab.sh HEAD HEAD
# AB_JAVA_OPTS_A, AB_JAVA_OPTS_B: that side's JVM options; unset, the side takes AB_JAVA_OPTS (set and
# empty: the JVM's defaults). Each side's options are written beside its commit in target/ab/refs.txt.
#
# Settings: AB_ROUNDS (5), AB_DURATION (10s), AB_CONNS (64), AB_SCENARIOS ("replays reads new-payments"),
# AB_JAVA_OPTS (none: the JVM's defaults, as a user running the jar gets; per side above). The load scripts are this
# checkout's (they speak only the HTTP API). Results: target/ab/results.txt. Installs wrk where it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: bash bench/ab.sh REF_A REF_B" >&2; exit 2; }
. bench/lib.sh
install_missing wrk:wrk
OUT=target/ab; mkdir -p "$OUT"
ROUNDS=${AB_ROUNDS:-5}; DURATION=${AB_DURATION:-10s}; CONNS=${AB_CONNS:-64}; THREADS=2
SCENARIOS=${AB_SCENARIOS:-replays reads new-payments}
# java_opts SIDE: the side's JVM options (AB_JAVA_OPTS_A or _B, else AB_JAVA_OPTS)
java_opts() { local var=AB_JAVA_OPTS_${1^^}; echo "${!var-${AB_JAVA_OPTS:-}}"; }
bash .ci/services >/dev/null

build() { # side ref: packages REF in target/ab/SIDE
  local dir="$OUT/$1"
  git worktree remove --force "$dir" 2>/dev/null || rm -rf "$dir"
  git worktree add --detach "$dir" "$2" >/dev/null
  (cd "$dir" && ./mvnw -q -B package -DskipTests -Dexec.skip=true)
  echo "$1 = $(git -C "$dir" log --oneline -1)"
}
build a "$1" | tee "$OUT/refs.txt"
build b "$2" | tee -a "$OUT/refs.txt"
for side in a b; do echo "$side JVM options: $(java_opts $side)"; done | tee -a "$OUT/refs.txt"

new_api_key
declare -A PID PORT
DYNALITE_PORT=${AB_DYNALITE_PORT:-18702}
if [ "${AB_STORE_A:-redis}" = dynamodb ] || [ "${AB_STORE_B:-redis}" = dynamodb ]; then
  DYNALITE_PORT=$DYNALITE_PORT bash .ci/dynalite stop >/dev/null
  DYNALITE_PORT=$DYNALITE_PORT bash .ci/dynalite start
fi
if [ -n "${AB_OTLP_SINK_PORT:-}" ]; then
  python3 bench/otlp-sink.py "$AB_OTLP_SINK_PORT" > "$OUT/otlp-sink.log" 2>&1 &
  SINK=$!
fi
start() { # side port redis-db
  DB=ledger_bench_ab_$1; REDIS_DB=$3
  fresh_stores
  local extra_env=AB_ENV_${1^^} kv
  local -a extra=() opts=()
  read -r -a opts <<< "$(java_opts "$1")"
  read -r -a extra <<< "${!extra_env:-}"
  for kv in ${extra[@]+"${extra[@]}"}; do export "$kv"; done
  local store=AB_STORE_${1^^}
  if [ "${!store:-redis}" = dynamodb ]; then
    LEDGER_IDEMPOTENCY_STORE=dynamodb LEDGER_IDEMPOTENCY_DYNAMODB_TABLE=ledger-bench-ab-$1 \
    AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:$DYNALITE_PORT AWS_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench \
      launch java "$OUT/$1/target/quarkus-app/quarkus-run.jar" "$2" "$OUT/$1.log" ${opts[@]+"${opts[@]}"}
  else
    launch java "$OUT/$1/target/quarkus-app/quarkus-run.jar" "$2" "$OUT/$1.log" ${opts[@]+"${opts[@]}"}
  fi
  PID[$1]=$!; PORT[$1]=$2
  for kv in ${extra[@]+"${extra[@]}"}; do unset "${kv%%=*}"; done
}
start a 8101 4
start b 8102 5
trap 'kill ${PID[a]} ${PID[b]} ${SINK:-} 2>/dev/null || true; [ "${AB_STORE_A:-redis}${AB_STORE_B:-redis}" = redisredis ] || DYNALITE_PORT=$DYNALITE_PORT bash .ci/dynalite stop >/dev/null' EXIT
wait_ready "${PID[a]}" 8101 "$OUT/a.log"; wait_ready "${PID[b]}" 8102 "$OUT/b.log"

seed() { # side: 200 accounts, each with one completed payment (the replays)
  local base="http://127.0.0.1:${PORT[$1]}" acc i code
  : > "$OUT/$1-accounts.txt"; : > "$OUT/$1-replays.txt"
  for i in $(seq 1 200); do
    acc=$(curl -s -X POST "$base/accounts" -H 'Content-Type: application/json' -H "Authorization: Bearer $API_KEY" \
      -H "Idempotency-Key: ab-open-$i" -d '{"currency":"EUR"}' | sed -E 's/.*"id":"([^"]+)".*/\1/')
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/accounts/$acc/transactions" -H 'Content-Type: application/json' \
      -H "Authorization: Bearer $API_KEY" -H "Idempotency-Key: ab-replay-$i" -d '{"type":"CREDIT","amount":1,"sequence":1}')
    [ "$code" = 201 ] || { echo "seed of $1 failed: $code" >&2; exit 1; }
    echo "$acc" >> "$OUT/$1-accounts.txt"
    echo "ab-replay-$i $acc {\"type\":\"CREDIT\",\"amount\":1,\"sequence\":1}" >> "$OUT/$1-replays.txt"
  done
}
seed a; seed b

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK_MS=$(( 1000 / $(getconf CLK_TCK) ))
SEQ=10
run() { # side scenario duration seq-base -> "requests cpu_ms p99_ms statuses"
  local side=$1 before after line args
  case $2 in
    replays) args=(replays.lua "$OUT/$side-replays.txt") ;;
    reads) args=(reads.lua "$OUT/$side-accounts.txt") ;;
    new-payments) args=(new-payments.lua "ab-$side-$4" "$THREADS" "$OUT/$side-accounts.txt") ;;
  esac
  before=$(cpu "${PID[$side]}")
  line=$(BENCH_PHASE=measure BENCH_SEQ_BASE=$4 wrk -t$THREADS -c"$CONNS" -d"$3" -s "bench/${args[0]}" \
    "http://127.0.0.1:${PORT[$side]}" -- "${args[@]:1}" | grep '^BENCH')
  after=$(cpu "${PID[$side]}")
  echo "$(sed -E 's/.*requests=([0-9]+).*/\1/' <<< "$line") $(( (after - before) * TICK_MS )) $(sed -E 's/.*p99_ms=([0-9.]+).*/\1/' <<< "$line") $(sed -E 's/.*statuses=([^ ]+).*/\1/' <<< "$line")"
}
# warm both: the JIT compiles each path before anything is measured
# (new payments: each run starts its sequences above every earlier run's)
for s in $SCENARIOS; do for _ in 1 2; do for side in a b; do
  SEQ=$((SEQ + 1000000)); run "$side" "$s" 6s "$SEQ" >/dev/null
done; done; done
secs=${DURATION%s}
echo "scenario round side requests cpu_ms cpu_ms_per_request rps p99_ms statuses" | tee "$OUT/results.txt"
for s in $SCENARIOS; do
  for r in $(seq 1 "$ROUNDS"); do
    # A first in odd rounds, B first in even ones: neither side always follows the other
    if (( r % 2 )); then order="a b"; else order="b a"; fi
    for side in $order; do
      SEQ=$((SEQ + 1000000))
      read -r n ms p99 st <<< "$(run "$side" "$s" "$DURATION" "$SEQ")"
      printf "%s %s %s %s %s %s %s %s %s\n" "$s" "$r" "$side" "$n" "$ms" "$(awk -v m="$ms" -v n="$n" 'BEGIN{printf "%.4f", m/n}')" \
        "$(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%.0f", n/s}')" "$p99" "$st" | tee -a "$OUT/results.txt"
    done
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "scenario median_cpu_ms_a median_cpu_ms_b b_over_a median_rps_a median_rps_b" | tee -a "$OUT/results.txt"
for s in $SCENARIOS; do
  ca=$(awk -v s="$s" '$1 == s && $3 == "a" {print $6}' "$OUT/results.txt" | median)
  cb=$(awk -v s="$s" '$1 == s && $3 == "b" {print $6}' "$OUT/results.txt" | median)
  ra=$(awk -v s="$s" '$1 == s && $3 == "a" {print $7}' "$OUT/results.txt" | median)
  rb=$(awk -v s="$s" '$1 == s && $3 == "b" {print $7}' "$OUT/results.txt" | median)
  echo "$s $ca $cb $(awk -v a="$ca" -v b="$cb" 'BEGIN{printf "%+.1f%%", (b/a-1)*100}') $ra $rb" | tee -a "$OUT/results.txt"
done
# The emulator's own limit, alone: conditional puts per second into a table of its own, from 64 concurrent
# curl clients (no service in between); a figure of dynalite on this machine, not of DynamoDB.
if [ "${AB_STORE_A:-redis}${AB_STORE_B:-redis}" != redisredis ]; then
  kill "${PID[a]}" "${PID[b]}" 2>/dev/null || true
  ddb() { curl -s -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:$DYNALITE_PORT/" -H "X-Amz-Target: DynamoDB_20120810.$1" \
    -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Date: 20260101T000000Z' -H 'Authorization: AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0' \
    -d "$2"; }
  ddb CreateTable '{"TableName":"bench-limit","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"}],"KeySchema":[{"AttributeName":"id","KeyType":"HASH"}]}' >/dev/null
  export -f ddb; export DYNALITE_PORT
  begin=$(date +%s.%N)
  seq 1 20000 | xargs -P 64 -I{} bash -c 'ddb PutItem "{\"TableName\":\"bench-limit\",\"Item\":{\"id\":{\"S\":\"k{}\"}},\"ConditionExpression\":\"attribute_not_exists(id)\"}"' \
    | sort | uniq -c > "$OUT/dynalite-limit.txt"
  end=$(date +%s.%N)
  echo "dynalite alone: 20000 conditional puts in $(awk -v b="$begin" -v e="$end" 'BEGIN{printf "%.1f", e-b}') s" \
    "($(awk -v b="$begin" -v e="$end" 'BEGIN{printf "%.0f", 20000/(e-b)}')/s, curl-bound; statuses: $(tr -s ' \n' ' ' < "$OUT/dynalite-limit.txt"))" \
    "- an emulator's figure, not DynamoDB's" | tee -a "$OUT/results.txt"
fi
