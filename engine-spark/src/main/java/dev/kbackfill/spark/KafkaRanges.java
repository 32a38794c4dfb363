package dev.kbackfill.spark;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.PartitionSplit;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The plan's ranges through Spark's Kafka batch source: {@code assign} of exactly the partitions, offsets from the
 * plan (or a job's progress), {@code read_committed} unless the request says otherwise, {@code failOnDataLoss} unless
 * {@code --allow-data-loss}, headers included.
 */
final class KafkaRanges {

    /** Consumer settings Spark's source sets itself and refuses. */
    private static final Set<String> SPARK_OWNS = Set.of("group.id", "auto.offset.reset", "key.deserializer",
            "value.deserializer", "enable.auto.commit", "interceptor.classes", "isolation.level", "max.poll.records");

    private KafkaRanges() {
    }

    /**
     * @param ranges        per partition, what is left of it; partitions with nothing left are left out
     * @param minPartitions Spark partitions to split the ranges into at least (a large partition is read by
     *                      several tasks), or 0 for one task per partition
     */
    static Dataset<Row> read(SparkSession spark, Plan plan, Map<Integer, PartitionSplit> ranges,
                             Map<String, Object> clientConfig, boolean allowDataLoss, int minPartitions) {
        Map<Integer, PartitionSplit> open = new TreeMap<>();
        ranges.forEach((p, r) -> {
            if (!r.done()) {
                open.put(p, r);
            }
        });
        if (open.isEmpty()) {
            throw new IllegalArgumentException("no range to read");
        }
        String topic = plan.topic();
        DataFrameReader reader = spark.read().format("kafka");
        clientConfig.forEach((k, v) -> {
            if (!SPARK_OWNS.contains(k)) {
                reader.option("kafka." + k, String.valueOf(v));
            }
        });
        String quoted = json(topic);
        reader.option("assign", "{" + quoted + ":[" + open.keySet().stream().map(String::valueOf)
                        .collect(Collectors.joining(",")) + "]}")
                .option("startingOffsets", offsets(quoted, open, PartitionSplit::next))
                .option("endingOffsets", offsets(quoted, open, PartitionSplit::end))
                .option("kafka.isolation.level", plan.request().isolationLevel().toString().toLowerCase(Locale.ROOT))
                .option("failOnDataLoss", String.valueOf(!allowDataLoss))
                .option("includeHeaders", "true");
        if (minPartitions > 0) {
            reader.option("minPartitions", String.valueOf(minPartitions));
        }
        return reader.load();
    }

    private static String offsets(String quotedTopic, Map<Integer, PartitionSplit> ranges,
                                  java.util.function.ToLongFunction<PartitionSplit> offset) {
        return "{" + quotedTopic + ":{" + ranges.entrySet().stream()
                .map(e -> "\"" + e.getKey() + "\":" + offset.applyAsLong(e.getValue()))
                .collect(Collectors.joining(",")) + "}}";
    }

    private static String json(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** The source partition of a row of Spark's Kafka source. */
    static int partitionOf(Row row) {
        return row.getInt(3);
    }

    /**
     * A row of Spark's Kafka source as the record kbackfill's decoders take. The source's columns are fixed: key,
     * value, topic, partition, offset, timestamp, timestampType, and headers (asked for).
     */
    static SourceRecord record(Row row) {
        Object ts = row.get(5);
        long millis = ts instanceof Instant i ? i.toEpochMilli() : ((java.sql.Timestamp) ts).getTime();
        RecordHeaders headers = new RecordHeaders();
        if (row.size() > 7 && !row.isNullAt(7)) {
            List<Row> list = row.getList(7);
            for (Row header : list) {
                headers.add(header.getString(0), header.isNullAt(1) ? null : (byte[]) header.get(1));
            }
        }
        return new SourceRecord(row.getString(2), partitionOf(row), row.getLong(4), millis,
                row.isNullAt(0) ? null : (byte[]) row.get(0), row.isNullAt(1) ? null : (byte[]) row.get(1), headers);
    }
}
