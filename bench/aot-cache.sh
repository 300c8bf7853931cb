#!/usr/bin/env bash
# Builds the application for the JDK's AOT cache (JEP 483/515, JDK 25+) and trains the cache:
#   bash bench/aot-cache.sh      -> target/aot/quarkus-run.jar and target/aot/app.aot
# Run it with:  <jdk25>/bin/java -XX:AOTCache=target/aot/app.aot -jar target/aot/quarkus-run.jar
#
# The cache holds the classes the application loaded and linked, and the methods' profiles, as one
# JVM saw them in a training run; Quarkus' aot-jar packaging puts every class on the JDK's own class
# path so that the cache can hold them (the default fast-jar loads them through its own loader).
# The training run starts the jar against local PostgreSQL (database ledger_aot) and Redis
# (database 4), sends every kind of request, and stops it: the JVM writes the cache as it exits.
# A cache only serves the same JDK build and the same jars; rebuild it after either changes.
#
# Settings (environment): AOT_JAVA (a java of JDK 25 or later; default: the first found under
# /usr/lib/jvm, else `java`), AOT_JAVA_OPTS (the JVM options of the training run, which the runs
# with the cache should share; default below), AOT_PORT (8097), AOT_ROUNDS (100).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

if [ -z "${AOT_JAVA:-}" ]; then
  for candidate in /usr/lib/jvm/*-2[5-9]*/bin/java /usr/lib/jvm/*-[3-9][0-9]*/bin/java java; do
    if [ -x "$candidate" ] || command -v "$candidate" >/dev/null 2>&1; then
      major=$("$candidate" -XshowSettings:properties -version 2>&1 | sed -nE 's/ *java.specification.version = ([0-9]+).*/\1/p')
      if [ "${major:-0}" -ge 25 ]; then AOT_JAVA=$candidate; break; fi
    fi
  done
fi
[ -n "${AOT_JAVA:-}" ] || { echo "aot-cache: no JDK 25 or later found; set AOT_JAVA" >&2; exit 2; }
# The runtime options should match the training run's: the benchmark's recommended ones by default.
AOT_JAVA_OPTS=${AOT_JAVA_OPTS-"-Xms64m -Xmx160m -XX:+UseSerialGC"}
PORT=${AOT_PORT:-8097}
ROUNDS=${AOT_ROUNDS:-100}
APPDIR=target/aot
DB=ledger_aot
REDIS_DB=4

bash .ci/services >/dev/null
# its own directory: target/quarkus-app stays the default fast-jar, which starts faster without a cache
package_aot_jar "$APPDIR"
# shellcheck disable=SC2086
training_run aot "$AOT_JAVA" "$APPDIR/quarkus-run.jar" "$PORT" "$ROUNDS" "$APPDIR/app.aot" "$APPDIR/training.log" \
  $AOT_JAVA_OPTS -XX:AOTCacheOutput="$APPDIR/app.aot"
echo "$APPDIR/app.aot ($(du -h "$APPDIR/app.aot" | cut -f1), $("$AOT_JAVA" -version 2>&1 | head -1))"
echo "java: $AOT_JAVA"
