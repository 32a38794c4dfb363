package dev.kbackfill.interop.iceberg;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.from_json;
import static org.apache.spark.sql.functions.row_number;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.expressions.Window;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The benchmark peer of kbackfill's Iceberg sink (bench/run.sh iceberg): Spark 4.1 local[2] with Iceberg's Spark
 * runtime reads the plan's range from Kafka ({@code startingOffsets}/{@code endingOffsets} from
 * {@code kbackfill plan --format spark}), keeps the last record per key, and creates the table {@code db.TABLE} of
 * the Hadoop catalog at WAREHOUSE ({@code create}: format v2, merge-on-read, as kbackfill creates its tables) or
 * MERGEs into it ({@code merge}: update every column of a matched key, insert the others, with position deletes;
 * {@code merge-cow}: the same copy-on-write, every touched file rewritten). Prints
 * {@code session=S job=J rows=N}. Usage: {@code SparkIcebergBench BOOTSTRAP TOPIC STARTING ENDING WAREHOUSE TABLE
 * create|merge|merge-cow|create-day|merge-day:DAY:KEYS} (the last two: records with a {@code day}, the table
 * partitioned by it, merged on the key columns KEYS and {@code t.day = DAY}).
 */
public final class SparkIcebergBench {

    private SparkIcebergBench() {
    }

    public static void main(String[] args) throws Exception {
        long t0 = System.nanoTime();
        SparkSession spark = SparkSession.builder().master("local[2]").appName("kbackfill-bench-iceberg-peer")
                .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
                .config("spark.sql.catalog.bench", "org.apache.iceberg.spark.SparkCatalog")
                .config("spark.sql.catalog.bench.type", "hadoop")
                .config("spark.sql.catalog.bench.warehouse", args[4])
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.ui.enabled", "false")
                .getOrCreate();
        long t1 = System.nanoTime();
        StructType value = new StructType().add("order_id", DataTypes.StringType).add("customer", DataTypes.StringType)
                .add("status", DataTypes.StringType).add("amount", DataTypes.createDecimalType(38, 18))
                .add("currency", DataTypes.StringType).add("items", DataTypes.LongType)
                .add("channel", DataTypes.StringType).add("updated_at", DataTypes.StringType)
                .add("note", DataTypes.StringType);
        boolean byDay = args[6].equals("create-day") || args[6].startsWith("merge-day:");
        if (byDay) {
            value = value.add("day", DataTypes.StringType); // the partitioned bench's records carry their day
        }
        Dataset<Row> source = spark.read().format("kafka").option("kafka.bootstrap.servers", args[0])
                .option("subscribe", args[1]).option("startingOffsets", args[2]).option("endingOffsets", args[3])
                .load()
                .select(col("key").cast("string").as("kafka_key"), from_json(col("value").cast("string"), value).as("v"),
                        col("partition").cast("long").as("kafka_partition"), col("offset").as("kafka_offset"),
                        col("timestamp").as("kafka_timestamp"))
                .withColumn("rn", row_number().over(Window.partitionBy("kafka_key")
                        .orderBy(col("kafka_timestamp").desc(), col("kafka_offset").desc())))
                .where("rn = 1")
                .select(col("kafka_key"), col("v.*"), col("kafka_partition"), col("kafka_offset"), col("kafka_timestamp"));
        String table = "bench.db." + args[5];
        if (args[6].equals("create-day")) {
            source.writeTo(table).partitionedBy(col("day")).tableProperty("format-version", "2")
                    .tableProperty("write.merge.mode", "merge-on-read")
                    .tableProperty("write.update.mode", "merge-on-read")
                    .tableProperty("write.delete.mode", "merge-on-read").createOrReplace();
        } else if (args[6].startsWith("merge-day:")) {
            // the key columns, and the day's partition as a literal (what a Spark user who knows the day gives)
            String[] m = args[6].split(":");
            String on = java.util.Arrays.stream(m[2].split(",")).map(k -> "t." + k + " = s." + k)
                    .collect(java.util.stream.Collectors.joining(" AND ")) + " AND t.day = '" + m[1] + "'";
            source.createOrReplaceTempView("source");
            spark.sql("MERGE INTO " + table + " t USING source s ON " + on
                    + " WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *");
        } else if (args[6].equals("create")) {
            source.writeTo(table).tableProperty("format-version", "2")
                    .tableProperty("write.merge.mode", "merge-on-read")
                    .tableProperty("write.update.mode", "merge-on-read")
                    .tableProperty("write.delete.mode", "merge-on-read").createOrReplace();
        } else {
            // merge: the table's own mode (merge-on-read for the tables of this bench); merge-cow: copy-on-write
            spark.sql("ALTER TABLE " + table + " SET TBLPROPERTIES ('write.merge.mode' = '"
                    + (args[6].equals("merge-cow") ? "copy-on-write" : "merge-on-read") + "')");
            source.createOrReplaceTempView("source");
            spark.sql("MERGE INTO " + table + " t USING source s ON t.kafka_key = s.kafka_key "
                    + "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *");
        }
        long t2 = System.nanoTime();
        long rows = spark.table(table).count();
        System.out.printf("session=%.2f job=%.2f rows=%d%n", (t1 - t0) / 1e9, (t2 - t1) / 1e9, rows);
        spark.stop();
    }
}
