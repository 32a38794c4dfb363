package dev.kbackfill.interop;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.from_json;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.row_number;

import java.util.ArrayList;
import java.util.List;

import io.delta.tables.DeltaTable;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.expressions.Window;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The benchmark peer of kbackfill's Delta sink (bench/run.sh): Spark local[2] reads the plan's range from Kafka
 * ({@code startingOffsets}/{@code endingOffsets} from {@code kbackfill plan --format spark}), keeps the last record per
 * key, and writes a new Delta table ({@code create}) or MERGEs into an existing one ({@code merge}).
 * Prints {@code session=S job=J rows=N}. Usage: {@code SparkDeltaBench BOOTSTRAP TOPIC STARTING ENDING PATH
 * create|merge|merge-day:DAY:KEYS} (the last: records with a {@code day}, merged on the key columns KEYS and
 * {@code t.day = DAY}).
 */
public final class SparkDeltaBench {

    private SparkDeltaBench() {
    }

    public static void main(String[] args) throws Exception {
        long t0 = System.nanoTime();
        SparkSession spark = LocalDeltaSpark.start("kbackfill-bench-peer");
        long t1 = System.nanoTime();
        StructType value = new StructType().add("order_id", DataTypes.StringType).add("customer", DataTypes.StringType)
                .add("status", DataTypes.StringType).add("amount", DataTypes.createDecimalType(38, 18))
                .add("currency", DataTypes.StringType).add("items", DataTypes.LongType)
                .add("channel", DataTypes.StringType).add("updated_at", DataTypes.StringType)
                .add("note", DataTypes.StringType);
        if (args[5].startsWith("merge-day:")) {
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
        if (args[5].equals("create")) {
            source.write().format("delta").save(args[4]);
        } else {
            // into a table another writer created (kbackfill's, in the growth bench): its columns, in its types
            List<org.apache.spark.sql.Column> aligned = new ArrayList<>();
            List<String> have = List.of(source.columns());
            for (org.apache.spark.sql.types.StructField f : spark.read().format("delta").load(args[4]).schema().fields()) {
                aligned.add((f.name().equals("kafka_topic") ? lit(args[1])
                        : have.contains(f.name()) ? col(f.name()) : lit(null)).cast(f.dataType()).as(f.name()));
            }
            source = source.select(aligned.toArray(new org.apache.spark.sql.Column[0]));
            // merge-day:DAY:KEYS (the partitioned bench): the key columns, and the day's partition as a literal, the
            // predicate a Spark user who knows the backfill's day gives the MERGE to prune the other partitions
            String on = "t.kafka_key = s.kafka_key";
            if (args[5].startsWith("merge-day:")) {
                String[] m = args[5].split(":");
                on = java.util.Arrays.stream(m[2].split(",")).map(k -> "t." + k + " = s." + k)
                        .collect(java.util.stream.Collectors.joining(" AND ")) + " AND t.day = '" + m[1] + "'";
            }
            DeltaTable.forPath(spark, args[4]).as("t").merge(source.as("s"), on)
                    .whenMatched().updateAll().whenNotMatched().insertAll().execute();
        }
        long t2 = System.nanoTime();
        long rows = spark.read().format("delta").load(args[4]).count();
        System.out.printf("session=%.2f job=%.2f rows=%d%n", (t1 - t0) / 1e9, (t2 - t1) / 1e9, rows);
        spark.stop();
    }
}
