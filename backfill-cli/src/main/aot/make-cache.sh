#!/usr/bin/env bash
# Makes target/kbackfill.aot, the AOT cache (JEP 483/514/515) that bin/kbackfill gives a JDK 25 runtime, from a
# training run of the commands a cron job runs (dev.kbackfill.cli.AotTraining: a broker in a process of its own, plan, runs into
# SQLite and Delta, status, jobs), and target/kbackfill-jdbc.aot from the same without Delta, which the launcher gives
# a command whose sink is a database, and plan (a JDK 25 loads every class of its cache as it starts: Delta's cost a
# run into SQLite 0.06-0.08 s). Run by the build (backfill-cli/pom.xml) after the jar is packaged; needs a JDK 25
# or later: $KBACKFILL_AOT_JAVA, else $JAVA25_HOME/bin/java, else one under /usr/lib/jvm. Without one, or when a
# training fails, it says so and makes nothing of that cache: bin/kbackfill then runs as it does on JDK 17 (the CDS
# archive), or with the other cache.
# Usage: make-cache.sh TARGET_DIR
set -uo pipefail
target="$1"
jar="$target/kbackfill.jar"
lake="$target/kbackfill-lake.jar"
rm -f "$target"/kbackfill.aot* "$target"/kbackfill-jdbc.aot*
if [[ "${KBACKFILL_AOT:-}" == "skip" ]]; then
  echo "AOT cache: skipped (KBACKFILL_AOT=skip)"
  exit 0
fi
major() { # the feature version of a java binary, from its release file (no JVM started)
  local home; home="$(dirname "$(dirname "$(readlink -f "$1")")")"
  sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$home/release" 2>/dev/null
}
java=""
for candidate in "${KBACKFILL_AOT_JAVA:-}" "${JAVA25_HOME:+$JAVA25_HOME/bin/java}" /usr/lib/jvm/*/bin/java; do
  if [[ -n "$candidate" && -x "$candidate" ]] && (( $(major "$candidate" || echo 0) >= 25 )); then
    java="$(readlink -f "$candidate")"
    break
  fi
done
if [[ -z "$java" ]]; then
  echo "AOT cache: no JDK 25 or later found (set KBACKFILL_AOT_JAVA): bin/kbackfill uses the CDS archive"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# the training's class path is the one bin/kbackfill gives the commands the cache is for (a cache is used only
# with the class path it was made with): for all, kbackfill.jar and kbackfill-lake.jar (-cp, as for a lake sink);
# for jdbc, kbackfill.jar alone (-jar, whose class path is the same): each manifest names its libraries in lib/
# native access for SQLite's JDBC driver, as bin/kbackfill gives it with the cache (a cache is used only with the
# module options it was made with)
# JDK 25 assembles the cache in a child JVM whose failure (a crash, status 134) still leaves the training JVM
# exiting 0 and an empty file: both are checked
# The training's broker runs in a process of its own: a JDK 25 loads every class in the cache as it starts, and the
# broker's would be loaded by every run (0.1 s and 30 MB of a run into SQLite). It exits when its input closes.
coproc BROKER { cd "$work" && exec "$java" -Xmx512m -cp "$jar:$lake" dev.kbackfill.embedded.EmbeddedKafkaProcess 2>"$work/broker.log"; }
servers=""
while IFS= read -t 120 -r line <&"${BROKER[0]}"; do
  if [[ "$line" == READY\ * ]]; then
    servers="${line#READY }"
    break
  fi
done
# train NAME SET CLASSPATH: target/NAME.aot from the training set SET
train() {
  local cache="$target/$1.aot"
  if [[ -n "$servers" ]] && (cd "$work" && "$java" -XX:AOTCacheOutput="$cache" -Xlog:disable \
        -Xlog:all=error:stderr --enable-native-access=ALL-UNNAMED -cp "$3" dev.kbackfill.cli.AotTraining "$servers" \
        "$2") > "$cache.log" 2>&1 \
      && [[ -s "$cache" ]] && ! grep -q "Child process failed" "$cache.log"; then
    echo "$java" > "$cache.java"
    echo "AOT cache: made $cache with $java"
  else
    rm -f "$cache"
    [[ -n "$servers" ]] || cat "$work/broker.log" > "$cache.log"
    echo "AOT cache: the training run failed (see $cache.log): bin/kbackfill uses the CDS archive or the other cache"
  fi
}
train kbackfill all "$jar:$lake"
train kbackfill-jdbc jdbc "$jar"
broker="${BROKER_PID:-}"
if [[ -n "${BROKER[1]:-}" ]]; then
  eval "exec ${BROKER[1]}>&-" # the broker's input closed: it stops
fi
[[ -z "$broker" ]] || wait "$broker" 2>/dev/null
exit 0
