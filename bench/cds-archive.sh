#!/usr/bin/env bash
# Packages the application as an aot-jar (every class on the JVM's own class path) into target/cds and
# trains a dynamic class-data-sharing archive (AppCDS, JDK 13+) of it:
#   bash bench/cds-archive.sh    -> target/cds/quarkus-run.jar and target/cds/app.jsa
# Run it with:  java -XX:SharedArchiveFile=target/cds/app.jsa -jar target/cds/quarkus-run.jar
#
# The archive holds every class the application loaded in a training run, parsed and verified, so a
# start maps them instead of reading, inflating and verifying them again. It serves classes in full
# only to the JVM's own class loaders: the default fast-jar loads the application's classes through
# Quarkus' own class loader, which must still read and inflate each one from its jar before the JVM
# finds it in the archive (2.2 to 2.4 s to ready here, against 1.4 to 1.7 s for the aot-jar, same
# minutes). Quarkus' own AppCDS build (quarkus.package.jar.appcds.enabled) archives only the classes
# of its static initialisation, which gave no measurable gain here. The training run starts the jar
# against local PostgreSQL (database ledger_cds) and Redis (database 5), sends every kind of request
# and stops it: the JVM writes the archive as it exits. The archive only serves the same JDK build
# and the same jars; after a rebuild the JVM ignores it (and says so) and starts as without it, so
# run this again after any change. On JDK 25 or later, bench/aot-cache.sh does more.
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
APPDIR=target/cds
ARCHIVE=$APPDIR/app.jsa
DB=ledger_cds
REDIS_DB=5

bash .ci/services >/dev/null
package_aot_jar "$APPDIR"
# shellcheck disable=SC2086
training_run cds "$JAVA" "$APPDIR/quarkus-run.jar" "$PORT" "$ROUNDS" "$ARCHIVE" \
  "$APPDIR/training.log" $CDS_JAVA_OPTS -XX:ArchiveClassesAtExit="$ARCHIVE"
echo "$ARCHIVE ($(du -h "$ARCHIVE" | cut -f1), $("$JAVA" -version 2>&1 | head -1))"
