package dev.kbackfill.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import dev.kbackfill.core.version.Version;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The target index answers the same in memory and once it moved to disk past its memory budget. */
class TargetIndexTest {

    @TempDir
    Path dir;

    private static byte[] key(int k) {
        return ("key-" + k).getBytes(StandardCharsets.UTF_8);
    }

    private static RecordHeaders written(String topic, int partition, long offset, long timestamp) {
        RecordHeaders h = new RecordHeaders();
        h.add(TargetIndex.SOURCE_TOPIC, topic.getBytes(StandardCharsets.UTF_8));
        h.add(TargetIndex.SOURCE_PARTITION, Integer.toString(partition).getBytes(StandardCharsets.UTF_8));
        h.add(TargetIndex.SOURCE_OFFSET, Long.toString(offset).getBytes(StandardCharsets.UTF_8));
        h.add(TargetIndex.SOURCE_TIMESTAMP, Long.toString(timestamp).getBytes(StandardCharsets.UTF_8));
        return h;
    }

    @Test
    void pastItsMemoryBudgetTheIndexMovesToDiskAndAnswersTheSame() {
        Random random = new Random(13);
        try (TargetIndex memory = new TargetIndex(Long.MAX_VALUE, dir);
             TargetIndex spilled = new TargetIndex(50, dir)) {
            for (int i = 0; i < 3_000; i++) {
                int k = random.nextInt(1_000);
                boolean tombstone = random.nextInt(10) == 0;
                RecordHeaders headers = random.nextBoolean() ? new RecordHeaders()
                        : written(random.nextBoolean() ? "orders" : "orders-v2", random.nextInt(3), i, 1_000L + i);
                long timestamp = 500L + random.nextInt(2_000);
                memory.add(key(k), tombstone, timestamp, headers);
                spilled.add(key(k), tombstone, timestamp, headers);
                if (i % 100 == 0) {
                    spilled.flush();
                }
            }
            spilled.flush();
            assertThat(spilled.onDisk()).isTrue();
            assertThat(memory.onDisk()).isFalse();
            assertThat(Files.exists(spilled.spillDirectory())).isTrue();
            // what a run writes goes to the same place
            for (int k = 0; k < 200; k++) {
                memory.written(key(k), "orders", 1, 5_000 + k, 9_000, 9_500, k % 7 == 0);
                spilled.written(key(k), "orders", 1, 5_000 + k, 9_000, 9_500, k % 7 == 0);
            }
            // and version fields (--version-field), whole numbers and text, kept on disk as in memory
            for (int k = 200; k < 400; k++) {
                Comparable<?> field = k % 3 == 0 ? null : k % 3 == 1 ? (Comparable<?>) (long) (k % 5) : "v\u00e9" + (k % 4);
                memory.written(key(k), "orders", 1, 5_000 + k, 9_000, 9_500, k % 7 == 0, field);
                spilled.written(key(k), "orders", 1, 5_000 + k, 9_000, 9_500, k % 7 == 0, field);
            }
            assertThat(spilled.records()).isEqualTo(memory.records()).isEqualTo(3_000);
            for (int k = 0; k < 1_100; k++) {
                int f = random.nextInt(4);
                Comparable<?> field = f == 0 ? null : f == 1 ? (Comparable<?>) (long) random.nextInt(5) : "v\u00e9" + random.nextInt(4);
                long ts = random.nextInt(4_000);
                Version incoming = new Version("orders", random.nextInt(3), random.nextInt(3_000), ts, ts, field);
                assertThat(spilled.newerWins(key(k), incoming, Version.ForeignRows.KEPT)).as("key " + k + " " + incoming)
                        .isEqualTo(memory.newerWins(key(k), incoming, Version.ForeignRows.KEPT));
                assertThat(spilled.absent(key(k))).as("key " + k).isEqualTo(memory.absent(key(k)));
            }
        }
    }

    @Test
    void aVersionFieldSurvivesItsHeader() {
        assertThat(TargetIndex.versionFrom(new String(TargetIndex.versionHeader(42L), StandardCharsets.UTF_8))).isEqualTo(42L);
        assertThat(TargetIndex.versionFrom(new String(TargetIndex.versionHeader("a:b\u00e9"), StandardCharsets.UTF_8)))
                .isEqualTo("a:b\u00e9");
        assertThat(TargetIndex.versionFrom(null)).isNull();
        assertThat(TargetIndex.versionFrom("i:x")).isNull();
    }

    @Test
    void closingTheIndexDeletesItsDirectory() {
        TargetIndex index = new TargetIndex(1, dir);
        index.add(key(1), false, 1, new RecordHeaders());
        index.add(key(2), false, 2, new RecordHeaders());
        index.flush();
        Path spilled = index.spillDirectory();
        // records without kbackfill's headers: another writer's, their place in the log unknown
        assertThat(index.newerWins(key(1), new Version("orders", 0, 0, 5), Version.ForeignRows.REPLACED)).isTrue();
        assertThat(index.newerWins(key(2), new Version("orders", 0, 0, 5), Version.ForeignRows.KEPT)).isFalse();
        index.close();
        assertThat(spilled).doesNotExist();
    }
}
