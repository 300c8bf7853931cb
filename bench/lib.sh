# Shared by bench/run.sh, bench/aot-cache.sh and bench/cds-archive.sh (sourced, not run). The caller
# sets DB (a PostgreSQL database), REDIS_DB (a Redis database number) and API_KEYS (the value of
# LEDGER_API_KEYS; training_run sets its own).

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
