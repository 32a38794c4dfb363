package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

/** Plans over an archive and the topic: where they meet, what is refused, how bounds resolve in the archive. */
class ArchivePlanTest {

    private static final Instant NOW = Instant.parse("2024-01-03T00:00:00Z");
    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    private final FakeOffsetSource topic = new FakeOffsetSource("orders", 2);
    private final FakeArchive archive = new FakeArchive();
    private final RangeResolver resolver = new RangeResolver(topic, Clock.fixed(NOW, ZoneOffset.UTC)).withArchive(archive);

    private static Instant hour(int h) {
        return T0.plusSeconds(3600L * h);
    }

    /** An archive modelled as each partition's archived timestamps by offset. */
    static final class FakeArchive implements Archive {
        final Map<Integer, TreeMap<Long, Instant>> records = new TreeMap<>();
        boolean exact = true;
        boolean timestamps = true;

        FakeArchive archive(int partition, long from, Instant... times) {
            TreeMap<Long, Instant> r = records.computeIfAbsent(partition, p -> new TreeMap<>());
            for (int i = 0; i < times.length; i++) {
                r.put(from + i, times[i]);
            }
            return this;
        }

        @Override
        public String location() {
            return "/archive";
        }

        @Override
        public String layout() {
            return "test layout";
        }

        @Override
        public Map<Integer, Extent> extents(String t, Set<Integer> partitions) {
            Map<Integer, Extent> e = new TreeMap<>();
            records.forEach((p, r) -> {
                if (partitions.contains(p)) {
                    e.put(p, new Extent(r.firstKey(), r.lastKey() + 1, r.size(), 1, exact, timestamps));
                }
            });
            return e;
        }

        @Override
        public Optional<OffsetSource.TimestampedOffset> firstAtOrAfter(String t, int partition, Instant time, long below) {
            return records.get(partition).headMap(below).entrySet().stream().filter(e -> !e.getValue().isBefore(time))
                    .findFirst().map(e -> new OffsetSource.TimestampedOffset(e.getKey(), e.getValue()));
        }
    }

    /** Partition 0: offsets 0-5 at hours 0-5, retention deleted 0-2, the archive holds 0-3 (3 in both). */
    private void halfDeleted() {
        topic.log(0).append(hour(0), hour(1), hour(2), hour(3), hour(4), hour(5)).logStart = 3;
        topic.log(1).append(hour(0), hour(1));
        archive.archive(0, 0, hour(0), hour(1), hour(2), hour(3));
    }

    private Plan resolve(String from, String to, boolean allowLoss) {
        return resolver.resolve(BackfillRequest.builder("orders").from(from).to(to).allowDataLoss(allowLoss)
                .archive("/archive").build());
    }

    private static String note(PartitionRange r, Note.Kind kind) {
        return r.notes().stream().filter(n -> n.kind() == kind).map(Note::message).findFirst().orElse("");
    }

    @Test
    void earliestIsTheArchivesFirstOffsetAndTheRangeMeetsTheTopicAtItsLogStart() {
        halfDeleted();
        PartitionRange p0 = resolve("earliest", "latest", false).partition(0).orElseThrow();
        assertThat(p0.start()).isZero();
        assertThat(p0.end()).isEqualTo(6);
        assertThat(p0.logStart()).as("the seam").isEqualTo(3);
        assertThat(note(p0, Note.Kind.ARCHIVED)).isEqualTo("offsets 0 to 2 (3) come from /archive (test layout, 1 "
                + "file(s), offsets 0 to 3, exact offsets), offsets 3 to 5 from the topic; they meet at the log start 3; "
                + "the archive's offsets 3 to 3 are in the topic too and are read once, from the topic");
        // partition 1 lost nothing: no archive part, no note
        assertThat(resolve("earliest", "latest", false).partition(1).orElseThrow().notes()).isEmpty();
    }

    @Test
    void anOffsetBelowTheLogStartIsReadFromTheArchiveAndBelowTheArchiveIsLoss() {
        halfDeleted();
        assertThat(resolve("{\"orders\":{\"0\":1,\"1\":0}}", "latest", false).partition(0).orElseThrow().start())
                .isEqualTo(1);
        archive.records.put(0, new TreeMap<>(archive.records.get(0).tailMap(2L)));
        assertThatThrownBy(() -> resolve("{\"orders\":{\"0\":1,\"1\":0}}", "latest", false))
                .isInstanceOf(DataLossException.class).hasMessageContaining("below the log start offset 2");
    }

    @Test
    void aHoleBetweenArchiveAndTopicIsRefusedUnlessLossIsAllowedThenNoted() {
        topic.log(0).append(hour(0), hour(1), hour(2), hour(3), hour(4), hour(5)).logStart = 4;
        topic.log(1).append(hour(0));
        archive.archive(0, 0, hour(0), hour(1));
        assertThatThrownBy(() -> resolve("earliest", "latest", false)).isInstanceOf(DataLossException.class)
                .hasMessageContaining("partition 0: offsets 2 to 3 are in neither /archive (it ends at 2) nor the "
                        + "topic (its log starts at 4)").hasMessageContaining("lost for good");
        PartitionRange p0 = resolve("earliest", "latest", true).partition(0).orElseThrow();
        assertThat(p0.start()).isZero();
        assertThat(note(p0, Note.Kind.ARCHIVE_HOLE)).contains("the 2 offsets are counted as lost");
        // a range above the hole needs neither
        assertThat(resolve("{\"orders\":{\"0\":4,\"1\":0}}", "latest", false).partition(0).orElseThrow().notes())
                .isEmpty();
    }

    @Test
    void inferredOffsetsAreReadOnlyWhenAllowed() {
        halfDeleted();
        archive.exact = false;
        assertThatThrownBy(() -> resolve("earliest", "latest", false)).isInstanceOf(RequestException.class)
                .hasMessageContaining("carry no offsets").hasMessageContaining("allowInferredOffsets(true)");
        Plan plan = resolver.resolve(BackfillRequest.builder("orders").from("earliest").to("latest")
                .archive("/archive").allowInferredOffsets(true).build());
        assertThat(note(plan.partition(0).orElseThrow(), Note.Kind.ARCHIVED)).contains("offsets inferred from file names");
    }

    @Test
    void aTimeBoundResolvesInTheArchiveByItsTimestampsOrSaysWhyItCannot() {
        halfDeleted();
        PartitionRange p0 = resolve("2024-01-01T01:00Z", "2024-01-01T02:00Z", false).partition(0).orElseThrow();
        assertThat(p0.start()).isEqualTo(1);
        assertThat(p0.end()).isEqualTo(2);
        assertThat(p0.startTime()).contains(hour(1));
        archive.timestamps = false;
        PartitionRange untimed = resolve("2024-01-01T01:00Z", "latest", false).partition(0).orElseThrow();
        assertThat(untimed.start()).isEqualTo(3);
        assertThat(untimed.notes().stream().map(Note::message))
                .contains("/archive's records carry no timestamps: time bounds resolve in the topic only, from its log "
                        + "start 3");
    }

    @Test
    void aStoredPlanReadingBelowTheLogStartIsNotLossWhereTheArchiveHoldsIt() {
        halfDeleted();
        Plan plan = resolve("earliest", "latest", false);
        TopicInfo live = topic.describe("orders");
        PlanCheck.check(plan, topic, live, Map.of(), false, archive);
        assertThatThrownBy(() -> PlanCheck.check(plan, topic, live, Map.of(), false))
                .isInstanceOf(DataLossException.class);
        assertThat(Plan.fromJson(plan.toJson())).isEqualTo(plan);
        assertThat(plan.request().archive()).contains("/archive");
    }

    @Test
    void anArchiveWithCredentialsInItsUrlIsRefused() {
        assertThatThrownBy(() -> BackfillRequest.builder("orders").from("earliest").to("latest")
                .archive("s3a://key:secret@bucket/topics").build()).isInstanceOf(RequestException.class)
                .hasMessageContaining("s3a://***@bucket").hasMessageNotContaining("secret");
    }
}
