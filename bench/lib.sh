# Shared by bench/run.sh and bench/aot-cache.sh (sourced, not run). The caller sets DB (a PostgreSQL
# database), REDIS_DB (a Redis database number) and API_KEYS (the value of LEDGER_API_KEYS).

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
