#!/usr/bin/env bash
# Trains a dynamic class-data-sharing archive (AppCDS, JDK 13+) for the default packaging, the fast-jar:
#   bash bench/cds-archive.sh    -> target/quarkus-app/app-trained.jsa
# Run it with:  java -XX:SharedArchiveFile=target/quarkus-app/app-trained.jsa -jar target/quarkus-app/quarkus-run.jar
#
# The archive holds every class the application loaded in a training run, parsed and verified, so a
# start maps them instead of reading, inflating and verifying them again. Quarkus' own AppCDS build
# (quarkus.package.jar.appcds.enabled) archives only the classes of its static initialisation, which
# gave no measurable gain here; this one also holds those of the runtime start (Hibernate, Flyway,
# the pools) and of every kind of request. The training run starts the jar against local
# PostgreSQL (database ledger_cds) and Redis (database 5), sends every kind of request and stops it:
# the JVM writes the archive as it exits. The archive only serves the same JDK build and the same
# jars; after a rebuild the JVM ignores it (and says so) and starts as without it, so train it again
# after any change. On JDK 25 or later, bench/aot-cache.sh does more.
#
# Settings (environment): CDS_JAVA (java), CDS_JAVA_OPTS (the JVM options of the training run, which
# the runs with the archive should share; default below), CDS_PORT (8096), CDS_ROUNDS (100).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

JAVA=${CDS_JAVA:-java}
CDS_JAVA_OPTS=${CDS_JAVA_OPTS-"-Xms64m -Xmx160m -XX:+UseSerialGC"}
PORT=${CDS_PORT:-8096}
ROUNDS=${CDS_ROUNDS:-100}
ARCHIVE=target/quarkus-app/app-trained.jsa
DB=ledger_cds
REDIS_DB=5

bash .ci/services >/dev/null
[ -f target/quarkus-app/quarkus-run.jar ] || ./mvnw -q -B package -DskipTests
# shellcheck disable=SC2086
training_run cds "$JAVA" target/quarkus-app/quarkus-run.jar "$PORT" "$ROUNDS" "$ARCHIVE" \
  target/quarkus-app/cds-training.log $CDS_JAVA_OPTS -XX:ArchiveClassesAtExit="$ARCHIVE"
echo "$ARCHIVE ($(du -h "$ARCHIVE" | cut -f1), $("$JAVA" -version 2>&1 | head -1))"
