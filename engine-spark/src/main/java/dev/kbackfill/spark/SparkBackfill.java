package dev.kbackfill.spark;

import java.io.PrintWriter;
import java.nio.file.Path;

import dev.kbackfill.cli.Kbackfill;
import dev.kbackfill.cli.SparkJobSpec;
import dev.kbackfill.resolver.RequestException;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;

/**
 * The Spark application: {@code spark-submit --class dev.kbackfill.spark.SparkBackfill kbackfill-spark.jar --spec
 * FILE}. It runs the spec's {@code kbackfill run} command line under the job protocol (lock, stored state, plan
 * check) with the spec's frozen plan, writing wave by wave ({@link DeltaWaves}, {@link PartitionWaves}); output,
 * messages and exit codes (0 done, 1 failure, 2 bad input, 3 job conflict) are the command line's.
 */
public final class SparkBackfill {

    private SparkBackfill() {
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        if (args.length != 2 || !args[0].equals("--spec")) {
            err.println("kbackfill-spark: expected --spec FILE (written by 'kbackfill run --engine spark "
                    + "--spark-spec-out FILE')");
            System.exit(2);
        }
        SparkJobSpec spec;
        try {
            spec = SparkJobSpec.read(Path.of(args[1]));
        } catch (RequestException e) {
            err.println("kbackfill-spark: " + e.getMessage());
            System.exit(2);
            return;
        }
        SparkSession spark = SparkSession.builder().config(conf(spec)).getOrCreate();
        int code;
        try {
            code = Kbackfill.execute(out, err, new SparkEngine(spark, spec), spec.arguments().toArray(String[]::new));
        } finally {
            spark.stop();
        }
        System.exit(code);
    }

    /** The session's settings: what spark-submit was given, then what kbackfill needs unless given. */
    static SparkConf conf(SparkJobSpec spec) {
        SparkConf conf = new SparkConf();
        conf.setIfMissing("spark.app.name", "kbackfill " + spec.job());
        conf.setIfMissing("spark.master", "local[*]");
        conf.setIfMissing("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension");
        conf.setIfMissing("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog");
        conf.setIfMissing("spark.sql.datetime.java8API.enabled", "true");
        conf.setIfMissing("spark.sql.session.timeZone", "UTC");
        // a first Delta read takes minutes on a small machine otherwise (FACTS.md)
        conf.setIfMissing("spark.databricks.delta.snapshotPartitions", "2");
        conf.setIfMissing("spark.ui.showConsoleProgress", "false");
        conf.setIfMissing("spark.sql.debug.maxToStringFields", "1000");
        conf.setIfMissing("spark.sql.shuffle.partitions", "8");
        return conf;
    }
}
