#!/usr/bin/env bash
# Injects faults into real runs of bin/kbackfill and prints one line per fault and sink (docs/reliability.md).
#   bench/faults.sh [SIGKILLS] [all|sigkill|postgres|broker|concurrent|retention|registry|reset|s3|iceberg]   (default 20, all)
#   -Dfaults.records=N (default 200000) and -Dfaults.seed=S through FAULTS_OPTS
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mvn -B -ntp -q -DskipTests install
exec java -Xmx1g ${FAULTS_OPTS:-} -cp "$(cat bench/target/classpath.txt):bench/target/classes" \
    dev.kbackfill.bench.FaultInjection "$@"
