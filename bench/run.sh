#!/usr/bin/env bash
# Runs the benchmarks of docs/benchmarks.md side by side and prints a report.
#   bench/run.sh [RECORDS] [ROUNDS] [all|decode|read|postgres|narrow|delta|iceberg|scale|plan|index|growth|verify|cron|live|partitioned|serve]   (default 1000000 records, 2 rounds, all; needs kcat)
#   postgres: wide records (ten fields), then narrow ones (three small fields, RECORDS/10 keys); narrow: those only
#   live: beside a live writer, a gap of 1% before a tail of 99% and the last 1%, each beside --live-writer no
#   cron: runs of 1,000 and 10,000 records end to end (JDK 17 and, with the build's AOT cache, 25) beside kcat | psql and Spark
#   partitioned: not part of all; lake tables partitioned by day at RECORDS/10 and RECORDS rows, 1% touched
#   serve: load the topics (wide, Avro, narrow; BENCH_OPTS=-Dbench.serve=wide,growth picks them, growth being the Iceberg bench's every-key-once topic, partitioned the partitioned bench's topics), start PostgreSQL, print their addresses, keep them up until end of input (for experiments by hand)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v kcat >/dev/null || { echo "bench: kcat is missing: apt-get install -y kcat" >&2; exit 1; }
mvn -B -ntp -q -DskipTests install
mvn -B -ntp -q -pl interop-spark dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile=target/test-classpath.txt
spark_cp="$(cat interop-spark/target/test-classpath.txt):$(pwd)/interop-spark/target/test-classes"
# Spark 4.1 with Iceberg's Spark runtime, the peer of the iceberg mode
mvn -B -ntp -q -pl interop-iceberg dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile=target/test-classpath.txt
spark_iceberg_cp="$(cat interop-iceberg/target/test-classpath.txt):$(pwd)/interop-iceberg/target/test-classes"
# the Debezium JDBC sink on Kafka Connect, the peer of the postgres mode (not part of the build)
mvn -B -ntp -q -f bench/debezium/pom.xml dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
exec java -Xmx2g ${BENCH_OPTS:-} -Dbench.sparkClasspath="$spark_cp" -Dbench.sparkIcebergClasspath="$spark_iceberg_cp" \
    -Dbench.debeziumClasspath="$(cat bench/debezium/target/classpath.txt)" \
    -cp "$(cat bench/target/classpath.txt):bench/target/classes" dev.kbackfill.bench.Benchmark "$@"
