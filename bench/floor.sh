#!/usr/bin/env bash
# The floors: how near the service's replays and reads come to HTTP itself on this machine. In one run,
# round by round, the same wrk load (bench/replays.lua, bench/reads.lua: the same requests, headers and
# bodies) goes to four servers, each answering on a port of its own:
#   nginx    the HTTP floor: nginx answering a fixed body (a replay's answer, bench/floor/src/main/resources/
#            answer.json) from its configuration, started from target/floor/nginx/nginx.conf
#   vertx    the framework floor: a Quarkus application of the benchmark's own (bench/floor) answering the
#            same bytes from a plain Vert.x route, on the service's HTTP settings and JVM options
#   rest     the same application answering from a Quarkus REST endpoint (floor.door=rest)
#   redis    the Redis floor: the same application's Vert.x route sending each replay's EVALSHA of the service's
#            reserve script through the Vert.x Redis client and answering the bytes it returns (floor.door=redis,
#            its own Redis database); a read it answers as the Vert.x floor does
#   service  the packaged service, seeded with accounts and completed keys as bench/run.sh seeds them
# It prints each run's rate, p99 and CPU per request of the server's processes (from /proc: nginx's master
# and workers, or the JVM), then a table of the medians, with each server's ratio to the nginx floor and
# to the framework floor of the service's door for that scenario (replays: the Vert.x route, as the
# service's POSTs are; reads: the REST endpoint, as GET /accounts/{id} is), and for replays to the Redis floor,
# the least work a replay needs on this machine. The servers take turns in every round, each round starting
# one further along, so that none always follows another.
#
#   bash bench/floor.sh                                  e.g. FLOOR_ROUNDS=2 FLOOR_DURATION=8s bash bench/floor.sh
#
# Settings (environment): FLOOR_ROUNDS (3), FLOOR_DURATION (10s), FLOOR_WARMUP (6s: two such runs of
# each server and scenario before the rounds), FLOOR_CONNS (64; wrk runs 2 threads), FLOOR_SCENARIOS
# ("replays reads"), FLOOR_SERVERS ("nginx vertx redis rest service"), FLOOR_ACCOUNTS (1000),
# FLOOR_REPLAY_KEYS (2000), FLOOR_JAVA_OPTS (the JVM options of the service and the Quarkus floor alike;
# default bench/run.sh's: none, the JVM's defaults, as docs/operations.md starts the service),
# FLOOR_JAVA_OPTS_SERVICE and FLOOR_JAVA_OPTS_QUARKUS (one side's options; unset, FLOOR_JAVA_OPTS),
# ports FLOOR_PORT (8199, the service), FLOOR_NGINX_PORT (18080), FLOOR_QUARKUS_PORT (18081, the Vert.x
# floor; the REST floor on the next, the Redis floor on the one after), stores BENCH_DB (ledger_bench_floor,
# dropped and created), BENCH_REDIS_DB (6, flushed) and FLOOR_REDIS_DB (7, the Redis floor's, flushed). Results: target/floor/results.txt (every run) and results.md (the table).
# Installs wrk and nginx from Debian if missing; builds the service (when target/quarkus-app is missing)
# and the floor (when its sources are newer than its jar). Every process it starts is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

ROUNDS=${FLOOR_ROUNDS:-3}
DURATION=${FLOOR_DURATION:-10s}
WARMUP=${FLOOR_WARMUP:-6s}
CONNS=${FLOOR_CONNS:-64}
SCENARIOS=${FLOOR_SCENARIOS:-replays reads}
read -r -a SERVERS <<< "${FLOOR_SERVERS:-nginx vertx redis rest service}"
ACCOUNTS=${FLOOR_ACCOUNTS:-1000}
REPLAY_KEYS=${FLOOR_REPLAY_KEYS:-2000}
JAVA_OPTS=${FLOOR_JAVA_OPTS-""}
SERVICE_OPTS=${FLOOR_JAVA_OPTS_SERVICE-$JAVA_OPTS}
QUARKUS_OPTS=${FLOOR_JAVA_OPTS_QUARKUS-$JAVA_OPTS}
DB=${BENCH_DB:-ledger_bench_floor}
REDIS_DB=${BENCH_REDIS_DB:-6}
FLOOR_REDIS_DB=${FLOOR_REDIS_DB:-7}
declare -A PORT=([service]=${FLOOR_PORT:-8199} [nginx]=${FLOOR_NGINX_PORT:-18080}
  [vertx]=${FLOOR_QUARKUS_PORT:-18081} [rest]=$(( ${FLOOR_QUARKUS_PORT:-18081} + 1 ))
  [redis]=$(( ${FLOOR_QUARKUS_PORT:-18081} + 2 )))
# the framework floor of each scenario: the door the service answers it through
declare -A FRAMEWORK=([replays]=vertx [reads]=rest [new-payments]=vertx [inflight]=vertx)
OUT=target/floor
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
FLOOR_JAR=bench/floor/target/quarkus-app/quarkus-run.jar
mkdir -p "$OUT"

install_missing wrk:wrk curl:curl /usr/sbin/nginx:nginx
bash .ci/services >/dev/null
[ -f target/quarkus-app/quarkus-run.jar ] || ./mvnw -q -B package -DskipTests
if [ ! -f "$FLOOR_JAR" ] || [ -n "$(find bench/floor/pom.xml bench/floor/src -newer "$FLOOR_JAR" -print -quit)" ]; then
  ./mvnw -f bench/floor/pom.xml -q -B package -DskipTests
fi

# --- the servers ----------------------------------------------------------------------------------
declare -A PID
stop_all() {
  local p
  for p in "${PID[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PID[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop_all EXIT

# write_nginx_conf DIR PORT BODY-FILE: nginx's configuration for the floor, in DIR (its pid, logs and
# temporary files there too). It answers as the service answers a replay: 201 and Idempotent-Replayed to a
# POST, 200 to anything else, the same body either way, from the configuration (no file read per request).
# worker_processes auto: a worker per core, what nginx recommends, as Quarkus sizes its event loops by the
# cores (two per core); keepalive_requests: wrk's connections stay open the whole run, as with the JVM
# servers (nginx's default closes one every 1,000 requests); no access log, as the service writes none.
write_nginx_conf() {
  local dir=$1 port=$2 body; body=$(cat "$3")
  case $body in *"'"*|*'$'*) echo "$3: nginx's return text cannot hold ' or \$" >&2; return 1 ;; esac
  mkdir -p "$dir"
  cat > "$dir/nginx.conf" <<EOF
# written by bench/floor.sh
worker_processes auto;
pid $dir/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  server_tokens off;
  keepalive_requests 1000000;
  client_body_temp_path $dir/client_body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  server {
    listen 127.0.0.1:$port;
    location / {
      default_type application/json;
      if (\$request_method = POST) {
        add_header Idempotent-Replayed true;
        return 201 '$body';
      }
      return 200 '$body';
    }
  }
}
EOF
}
measured() { [[ " ${SERVERS[*]} " == *" $1 "* ]]; }
if measured nginx; then
  # in the foreground of a process of ours, so that $! is its master
  NGINX_DIR=$PWD/$OUT/nginx
  write_nginx_conf "$NGINX_DIR" "${PORT[nginx]}" bench/floor/src/main/resources/answer.json
  /usr/sbin/nginx -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log" -g 'daemon off;' &
  PID[nginx]=$!
fi
redis-cli -n "$FLOOR_REDIS_DB" FLUSHDB >/dev/null
for door in vertx rest redis; do
  measured $door || continue
  # shellcheck disable=SC2086
  QUARKUS_HTTP_PORT=${PORT[$door]} FLOOR_DOOR=$door QUARKUS_REDIS_HOSTS=redis://127.0.0.1:6379/$FLOOR_REDIS_DB \
    java $QUARKUS_OPTS -jar "$FLOOR_JAR" > "$OUT/$door.log" 2>&1 &
  PID[$door]=$!
done

fresh_stores
new_api_key
# shellcheck disable=SC2086
launch java target/quarkus-app/quarkus-run.jar "${PORT[service]}" "$OUT/service.log" $SERVICE_OPTS
PID[service]=$!

wait_answers() { # server: until it answers a GET (any status); fails if it exits, or after 60 s
  for _ in $(seq 1 3000); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${PORT[$1]}/accounts/x")" != 000 ] && return 0
    kill -0 "${PID[$1]}" 2>/dev/null || { echo "$1 exited; see $OUT/$1.log" >&2; return 1; }
    sleep 0.02
  done
  echo "$1 did not answer within 60 s" >&2; return 1
}
wait_ready "${PID[service]}" "${PORT[service]}" "$OUT/service.log"
for s in nginx vertx rest redis; do measured $s && wait_answers $s; done
seed_accounts "http://127.0.0.1:${PORT[service]}" "$OUT" "$ACCOUNTS" "$REPLAY_KEYS"

# server_pids SERVER: the processes whose CPU counts: nginx's master and its workers, or the JVM
server_pids() {
  if [ "$1" = nginx ]; then echo "${PID[nginx]} $(pgrep -P "${PID[nginx]}" | paste -sd' ')"; else echo "${PID[$1]}"; fi
}
# what each server answers to one replay and one read, headers and body: the floors' answers are of a size
# with the service's
first_replay=$(head -1 "$OUT/replays.txt")
read -r key account body <<< "$first_replay"
ANSWERS="Answer sizes in bytes, headers and body, to a replay and to a read:"
for s in "${SERVERS[@]}"; do
  base="http://127.0.0.1:${PORT[$s]}"
  ANSWERS+=" $s $(curl -s -i -X POST "$base/accounts/$account/transactions" -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $API_KEY" -H "Idempotency-Key: $key" -d "$body" | wc -c)"
  ANSWERS+=" and $(curl -s -i "$base/accounts/$account" -H "Authorization: Bearer $API_KEY" | wc -c),"
done
ANSWERS="${ANSWERS%,}."
echo "$ANSWERS"

# --- the rounds -------------------------------------------------------------------------------------
# measure SERVER SCENARIO PHASE DURATION: one wrk run against the server; with PHASE measure, prints
# "requests cpu_ticks BENCH-line"
measure() {
  local pids before after line args
  read -r -a args <<< "$(scenario_args "$2" "floor-$1-$RANDOM$RANDOM" "$CONNS" "$OUT")"
  pids=$(server_pids "$1")
  # shellcheck disable=SC2086
  before=$(cpu_ticks $pids)
  line=$(wrk_load "http://127.0.0.1:${PORT[$1]}" "$3" "$4" "$CONNS" "${args[@]}" | grep '^BENCH' || true)
  # shellcheck disable=SC2086
  after=$(cpu_ticks $pids)
  [ "$3" = measure ] && echo "$(field_of "$line" requests) $(( after - before )) $line"
  return 0
}
for s in $SCENARIOS; do
  for _ in 1 2; do for server in "${SERVERS[@]}"; do measure "$server" "$s" warmup "$WARMUP"; done; done
done
secs=${DURATION%s}
echo "scenario round server requests cpu_ms cpu_ms_per_request rps p99_ms expected_share statuses" | tee "$OUT/results.txt"
n=${#SERVERS[@]}
for s in $SCENARIOS; do
  for r in $(seq 1 "$ROUNDS"); do
    for k in $(seq 0 $(( n - 1 ))); do
      server=${SERVERS[$(( (k + r - 1) % n ))]}
      read -r requests ticks line <<< "$(measure "$server" "$s" measure "$DURATION")"
      echo "$s $r $server $requests $(( ticks * TICK_MS )) $(ms_per "$ticks" "$requests" 4)" \
        "$(awk -v n="$requests" -v s="$secs" 'BEGIN { printf "%.0f", n / s }') $(field_of "$line" p99_ms)" \
        "$(field_of "$line" expected_share) $(field_of "$line" statuses)" | tee -a "$OUT/results.txt"
    done
  done
done

# --- the table --------------------------------------------------------------------------------------
# med SCENARIO SERVER COLUMN: the median over the rounds of a column of results.txt
med() { awk -v s="$1" -v v="$2" -v c="$3" '$1 == s && $3 == v { print $c }' "$OUT/results.txt" | median_of; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }
{
  echo "| scenario | server | req/s | p99 ms | CPU ms/req | expected answers | req/s ÷ nginx | req/s ÷ framework floor | req/s ÷ Redis floor | CPU ÷ nginx | CPU ÷ framework floor |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for s in $SCENARIOS; do
    fw=${FRAMEWORK[$s]}
    for server in "${SERVERS[@]}"; do
      rps=$(med "$s" "$server" 7); cpu=$(med "$s" "$server" 6)
      # the Redis floor is a replay's: it does for a read what the Vert.x floor does
      redis_floor=-; [ "$s" = replays ] && measured redis && redis_floor=$(ratio "$rps" "$(med "$s" redis 7)")
      printf "| %s | %s | %.0f | %.2f | %.4f | %.4f | %s | %s | %s | %s | %s |\n" "$s" "$server" "$rps" "$(med "$s" "$server" 8)" "$cpu" \
        "$(med "$s" "$server" 9)" \
        "$(ratio "$rps" "$(med "$s" nginx 7)")" "$(ratio "$rps" "$(med "$s" "$fw" 7)")" "$redis_floor" \
        "$(ratio "$cpu" "$(med "$s" nginx 6)")" "$(ratio "$cpu" "$(med "$s" "$fw" 6)")"
    done
  done
  echo
  echo "Medians of $ROUNDS rounds of $DURATION at $CONNS connections (wrk, 2 threads), the servers in turn. CPU: the server's"
  echo "processes only (nginx's master and workers; the JVM). The framework floor: replays the Vert.x route (vertx), reads the"
  echo "Quarkus REST endpoint (rest), the doors the service answers them through. The Redis floor (redis): the Vert.x route"
  echo "and one EVALSHA of reserve.lua per replay, the least a replay needs (its Redis server's CPU is not in its column, as the"
  echo "service's is not in the service's). nginx: $(/usr/sbin/nginx -v 2>&1 | sed 's/.*: //'),"
  echo "worker_processes auto ($(if measured nginx; then pgrep -P "${PID[nginx]}" | wc -l; else echo not run; fi) workers). JVM options: service ${SERVICE_OPTS:-none}; Quarkus floor ${QUARKUS_OPTS:-none}."
  echo "$ANSWERS"
  echo "Machine: $(nproc) cores, $(java -version 2>&1 | head -1), load average before the run: $LOAD."
} | tee "$OUT/results.md"
