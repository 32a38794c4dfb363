package dev.kbackfill.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.version.Version;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The newer-wins guard of the Spark engine's MERGE, evaluated by Spark SQL itself, agrees with the one version rule
 * ({@link Version#supersedes}) on random versions: ties, other topics, other partitions, rows without a version.
 */
@Tag("spark")
class SparkGuardIT {

    @Test
    void theMergeGuardAgreesWithTheVersionRule() {
        SparkSession spark = SparkSession.builder().master("local[1]").appName("guard")
                .config("spark.ui.enabled", "false").config("spark.sql.datetime.java8API.enabled", "true")
                .config("spark.sql.session.timeZone", "UTC").getOrCreate();
        try {
            SinkSettings.MetadataColumns meta = SinkSettings.MetadataColumns.DEFAULT;
            StructType schema = new StructType().add("id", DataTypes.IntegerType)
                    .add(meta.topic(), DataTypes.StringType).add(meta.partition(), DataTypes.LongType)
                    .add(meta.offset(), DataTypes.LongType).add(meta.timestamp(), DataTypes.TimestampType)
                    .add(meta.logTime(), DataTypes.TimestampType);
            Random random = new Random(11);
            List<Row> stored = new ArrayList<>();
            List<Row> incoming = new ArrayList<>();
            Map<Integer, Boolean> expected = new HashMap<>();
            String[] topics = {"a", "b", "orders"};
            for (int i = 0; i < 3000; i++) {
                boolean versioned = random.nextInt(10) > 0;
                String storedTopic = random.nextInt(5) == 0 ? null : topics[random.nextInt(3)];
                // a stored row without log time (written before rows carried it) counts with its timestamp
                boolean logTimed = random.nextInt(4) > 0;
                long sts = random.nextInt(3);
                Version s = new Version(storedTopic, random.nextInt(3), random.nextInt(4), sts,
                        logTimed ? sts + random.nextInt(2) : sts);
                long its = random.nextInt(3);
                Version in = random.nextInt(6) == 0 && storedTopic != null ? s // the same version: kept out
                        : new Version(topics[random.nextInt(3)], random.nextInt(3), random.nextInt(4), its,
                        its + random.nextInt(2));
                stored.add(RowFactory.create(i, s.topic(), versioned ? (long) s.partition() : null,
                        versioned ? s.offset() : null, versioned ? Instant.ofEpochMilli(s.timestamp()) : null,
                        versioned && logTimed ? Instant.ofEpochMilli(s.logTime()) : null));
                incoming.add(RowFactory.create(i, in.topic(), (long) in.partition(), in.offset(),
                        Instant.ofEpochMilli(in.timestamp()), Instant.ofEpochMilli(in.logTime())));
                expected.put(i, in.supersedes(versioned ? s : null));
            }
            spark.createDataFrame(stored, schema).createOrReplaceTempView("t");
            spark.createDataFrame(incoming, schema).createOrReplaceTempView("s");
            String guard = GuardSql.sparkSql(meta, true, "t.", "s.");
            Map<Integer, Boolean> actual = new HashMap<>();
            for (Row r : spark.sql("SELECT t.id, coalesce(" + guard + ", false) FROM t JOIN s ON t.id = s.id").collectAsList()) {
                actual.put(r.getInt(0), r.getBoolean(1));
            }
            assertThat(actual).isEqualTo(expected);
        } finally {
            spark.stop();
        }
    }
}
