#!/usr/bin/env bash
# A/B of the Redis breaker on the replay path, in one run: the same packaged application (built with
# quarkus-smallrye-fault-tolerance on its class path) as two instances, A with Resilience4j's breaker
# (the project's), B with SmallRye Fault Tolerance's TypedGuard (-Dab.smallrye-ft=true), alternated
# AB_ROUNDS times under replays at 64 connections; CPU per replay of each instance from /proc.
#
# `bash bench/ab-breaker.sh` from the project: it makes the variant itself, in a git worktree under
# target/ab-breaker (HEAD plus bench/ab-breaker.patch: the SmallRye guard behind -Dab.smallrye-ft, and
# quarkus-smallrye-fault-tolerance on the class path of both A and B), packages it and runs there.
# Results: target/ab-breaker/target/bench-ab/results.txt. Needs wrk (bench/run.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! grep -q 'ab.smallrye-ft' src/main/java/dev/ledger/redis/RedisCalls.java; then
  variant=target/ab-breaker
  git worktree remove --force "$variant" 2>/dev/null || rm -rf "$variant"
  git worktree add --detach "$variant" HEAD >/dev/null
  git -C "$variant" apply "$PWD/bench/ab-breaker.patch"
  cp bench/ab-breaker.sh "$variant/bench/ab-breaker.sh"
  (cd "$variant" && ./mvnw -q -B package -DskipTests -Dexec.skip=true)
  exec bash "$variant/bench/ab-breaker.sh"
fi
. bench/lib.sh
DB=ledger_bench_ab; REDIS_DB=4; OUT=target/bench-ab; mkdir -p "$OUT"
ROUNDS=${AB_ROUNDS:-5}; DURATION=${AB_DURATION:-10s}; CONNS=${AB_CONNS:-64}
API_KEY="bench-ledger-key-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
API_KEYS="bench:$(printf %s "$API_KEY" | sha256sum | cut -d' ' -f1)"
export LEDGER_BENCH_API_KEY="$API_KEY"
OPTS="-Xms64m -Xmx160m -XX:+UseSerialGC"
fresh_stores
# shellcheck disable=SC2086
launch java target/quarkus-app/quarkus-run.jar 8101 "$OUT/a.log" $OPTS -Dab.smallrye-ft=false; A=$!
# shellcheck disable=SC2086
launch java target/quarkus-app/quarkus-run.jar 8102 "$OUT/b.log" $OPTS -Dab.smallrye-ft=true; B=$!
trap 'kill $A $B 2>/dev/null || true' EXIT
wait_ready $A 8101 "$OUT/a.log"; wait_ready $B 8102 "$OUT/b.log"
BASE=http://127.0.0.1:8101
: > "$OUT/replays.txt"
for i in $(seq 1 200); do
  acc=$(curl -s -X POST "$BASE/accounts" -H 'Content-Type: application/json' -H "Authorization: Bearer $API_KEY" \
    -H "Idempotency-Key: ab-open-$i" -d '{"currency":"EUR"}' | sed -E 's/.*"id":"([^"]+)".*/\1/')
  body="{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":1}"
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$BASE/accounts/$acc/transactions" -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $API_KEY" -H "Idempotency-Key: ab-replay-$i" -d "$body")
  [ "$code" = 201 ] || { echo "seed failed: $code" >&2; exit 1; }
  echo "ab-replay-$i $acc $body" >> "$OUT/replays.txt"
done
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK_MS=$(( 1000 / $(getconf CLK_TCK) ))
run() { # pid port duration -> "requests cpu_ms"
  local before after line
  before=$(cpu "$1")
  line=$(BENCH_PHASE=measure wrk -t2 -c"$CONNS" -d"$3" -s bench/replays.lua "http://127.0.0.1:$2" -- "$OUT/replays.txt" | grep '^BENCH')
  after=$(cpu "$1")
  echo "$(sed -E 's/.*requests=([0-9]+).*/\1/' <<< "$line") $(( (after - before) * TICK_MS )) $(sed -E 's/.*p99_ms=([0-9.]+).*/\1/' <<< "$line") $(sed -E 's/.*statuses=([^ ]+).*/\1/' <<< "$line")"
}
# warm both (the JIT compiles each path before anything is measured)
for _ in 1 2; do run $A 8101 8s >/dev/null; run $B 8102 8s >/dev/null; done
echo "round variant requests cpu_ms cpu_ms_per_replay rps p99_ms statuses" | tee "$OUT/results.txt"
secs=${DURATION%s}
for r in $(seq 1 "$ROUNDS"); do
  for v in A B; do
    if [ $v = A ]; then read -r n ms p99 st <<< "$(run $A 8101 "$DURATION")"; else read -r n ms p99 st <<< "$(run $B 8102 "$DURATION")"; fi
    printf "%s %s %s %s %s %s %s %s\n" "$r" "$v" "$n" "$ms" "$(awk -v m="$ms" -v n="$n" 'BEGIN{printf "%.4f", m/n}')" \
      "$(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%.0f", n/s}')" "$p99" "$st" | tee -a "$OUT/results.txt"
  done
done
for v in A B; do
  awk -v v=$v '$2 == v {print $5}' "$OUT/results.txt" | sort -n | awk -v v=$v '{a[NR]=$1} END {printf "median cpu_ms_per_replay %s = %s\n", v, (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}' | tee -a "$OUT/results.txt"
done
