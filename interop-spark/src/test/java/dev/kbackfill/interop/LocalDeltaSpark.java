package dev.kbackfill.interop;

import org.apache.spark.sql.SparkSession;

/** Spark in local mode with Delta, set up as it works on these machines (the interop test and the bench peer). */
final class LocalDeltaSpark {

    private LocalDeltaSpark() {
    }

    /**
     * local[2] with delta-spark's extension and catalog; one snapshot partition (the default makes a local first read
     * take minutes) and two shuffle partitions; no UI.
     */
    static SparkSession start(String appName) {
        return SparkSession.builder().master("local[2]").appName(appName)
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                .config("spark.databricks.delta.snapshotPartitions", "1")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.ui.enabled", "false")
                .getOrCreate();
    }
}
