package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.TreeSet;

import org.apache.kafka.common.IsolationLevel;
import org.junit.jupiter.api.Test;

class RangeResolverTest {

    private static final Instant NOW = Instant.parse("2024-01-03T00:00:00Z");
    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    private final FakeOffsetSource topic = new FakeOffsetSource("orders", 2);
    private final RangeResolver resolver = new RangeResolver(topic, Clock.fixed(NOW, ZoneOffset.UTC));

    private static Instant hour(int h) {
        return T0.plusSeconds(3600L * h);
    }

    private static BackfillRequest.Builder request(String from, String to) {
        return BackfillRequest.builder("orders").from(from).to(to);
    }

    private Plan resolve(String from, String to) {
        return resolver.resolve(request(from, to).build());
    }

    private static List<Note.Kind> kinds(PartitionRange r) {
        return r.notes().stream().map(Note::kind).toList();
    }

    @Test
    void continueStartsAtItsFirstBoundThenWhereThePreviousPlanEnded() {
        topic.log(0).append(hour(0), hour(1), hour(2));
        topic.log(1).append(hour(0));
        BackfillRequest request = request("continue:2024-01-01T01:00Z", "latest").build();
        Plan first = resolver.resolve(request);
        assertThat(first.partition(0).orElseThrow().start()).isEqualTo(1);
        assertThat(first.partition(1).orElseThrow().start()).isEqualTo(1);
        assertThat(first.request().from()).isInstanceOf(Bound.Continue.class);
        assertThat(request.moving()).isTrue();
        topic.log(0).append(hour(3), hour(4));
        topic.log(1).append(hour(3));
        Plan next = resolver.resolveContinuing(request, first);
        assertThat(next.partition(0).orElseThrow().start()).isEqualTo(3);
        assertThat(next.partition(0).orElseThrow().end()).isEqualTo(5);
        assertThat(next.partition(1).orElseThrow().start()).isEqualTo(1);
        assertThat(next.partition(1).orElseThrow().end()).isEqualTo(2);
        assertThat(next.request()).isEqualTo(request);
        // a recreated topic: the previous ends mean nothing
        Plan elsewhere = new Plan(first.request(), first.resolvedAt(), first.fromTime(), first.toTime(),
                first.clusterId(), "another-topic-id", first.timestampType(), first.partitions(), first.notes());
        assertThatThrownBy(() -> resolver.resolveContinuing(request, elsewhere)).isInstanceOf(RequestException.class)
                .hasMessageContaining("recreated");
        // a log truncated below the previous end (an unclean leader election): refused, not clamped with a note
        FakeOffsetSource truncatedTopic = new FakeOffsetSource("orders", 2);
        truncatedTopic.log(0).append(hour(0));
        truncatedTopic.log(1).append(hour(0), hour(1));
        assertThatThrownBy(() -> new RangeResolver(truncatedTopic, Clock.fixed(NOW, ZoneOffset.UTC)).resolveContinuing(request, next))
                .isInstanceOf(RequestException.class)
                .hasMessageContaining("partition 0 ends at offset 1, below 5")
                .hasMessageContaining("truncated");
    }

    @Test
    void aRangeBeginningInTieredStorageSaysHowMuchOfItTheBrokerReadsFromTheRemoteStore() {
        topic.remoteStorage = true;
        topic.log(0).append(hour(0), hour(1), hour(2), hour(3), hour(4)).localStart = 3L;
        topic.log(1).append(hour(0), hour(1)).localStart = 0L;
        Plan plan = resolve("2024-01-01T01:00Z", "latest");
        PartitionRange p0 = plan.partition(0).orElseThrow();
        assertThat(kinds(p0)).contains(Note.Kind.REMOTE_STORAGE);
        assertThat(p0.notes().stream().filter(n -> n.kind() == Note.Kind.REMOTE_STORAGE).findFirst().orElseThrow()
                .message()).startsWith("offsets 1 to 3 (2 of the range's 4) are in tiered storage, below offset 3");
        assertThat(kinds(plan.partition(1).orElseThrow())).doesNotContain(Note.Kind.REMOTE_STORAGE);

        // a range wholly in local segments, or a topic without tiered storage: no note, and no question asked
        assertThat(kinds(resolve("2024-01-01T03:00Z", "latest").partition(0).orElseThrow()))
                .doesNotContain(Note.Kind.REMOTE_STORAGE);
        topic.remoteStorage = false;
        topic.calls.clear();
        assertThat(kinds(resolve("earliest", "latest").partition(0).orElseThrow()))
                .doesNotContain(Note.Kind.REMOTE_STORAGE);
        assertThat(topic.calls).doesNotContain("localStart");
    }

    @Test
    void continueIsAFromOnlyAndNeedsItsFirstBound() {
        assertThatThrownBy(() -> request("continue", "latest").build()).isInstanceOf(RequestException.class)
                .hasMessageContaining("continue:BOUND");
        assertThatThrownBy(() -> request("earliest", "continue:latest").build()).isInstanceOf(RequestException.class)
                .hasMessageContaining("continue is a from bound only");
    }

    @Test
    void aTimeResolvesToTheFirstOffsetAtOrAfterIt() {
        topic.log(0).append(hour(0), hour(1), hour(2), hour(3));
        topic.log(1).append(hour(0), hour(5));
        Plan plan = resolve("2024-01-01T01:00Z", "2024-01-01T03:00Z");

        PartitionRange p0 = plan.partition(0).orElseThrow();
        assertThat(p0.start()).isEqualTo(1);
        assertThat(p0.end()).isEqualTo(3);
        assertThat(p0.startTime()).contains(hour(1));
        PartitionRange p1 = plan.partition(1).orElseThrow();
        assertThat(p1.start()).isEqualTo(1);
        assertThat(p1.end()).isEqualTo(1);
        assertThat(plan.fromTime()).contains(hour(1));
        assertThat(plan.toTime()).contains(hour(3));
        assertThat(plan.totalSpan()).isEqualTo(2);
    }

    @Test
    void aTimeBoundOverUntrimmedLogsReadsOneCheckAndNoFirstRecords() {
        topic.log(0).append(hour(0), hour(1), hour(2), hour(3));
        topic.log(1).append(hour(0), hour(2), hour(4));
        Plan plan = resolve("2024-01-01T01:00Z", "latest");
        assertThat(topic.scanned).as("only the check of the --from lookup").containsExactly(java.util.Set.of(0, 1));
        assertThat(plan.partition(0).orElseThrow().startTime()).contains(hour(1));
        assertThat(plan.partition(1).orElseThrow().startTime()).contains(hour(2));
    }

    @Test
    void theFirstRecordIsReadWhereARangeStartsAtTheLogStartOrRetentionMayHaveCutIt() {
        topic.log(0).append(hour(0), hour(1), hour(2));
        topic.log(1).append(hour(3), hour(4), hour(5));
        topic.log(1).logStart = 1; // hour(3) deleted: the first retained record is at hour(4)
        Plan plan = resolve("2024-01-01T01:00Z", "latest");
        // partition 0: the lookup answers offset 1 above log start 0, nothing more to read; partition 1: the lookup
        // answers the log start itself, so its first record is read to tell whether --from predates it
        assertThat(topic.scanned).containsExactly(java.util.Set.of(0, 1), java.util.Set.of(1));
        assertThat(kinds(plan.partition(1).orElseThrow())).containsExactly(Note.Kind.RANGE_OLDER_THAN_RETAINED);
        Plan earliest = resolve("earliest", "latest");
        assertThat(earliest.partition(0).orElseThrow().startTime()).contains(hour(0));
        assertThat(earliest.partition(1).orElseThrow().startTime()).contains(hour(4));
    }

    @Test
    void aTopicDescribedByTheCallerIsNotAskedForAgainAndGivesTheSamePlan() {
        topic.log(0).append(hour(0), hour(1));
        topic.log(1).append(hour(2));
        Plan asked = resolve("2024-01-01T01:00Z", "latest");
        assertThat(topic.calls).contains("describe");
        TopicInfo described = topic.describe("orders");
        topic.calls.clear();
        Plan told = resolver.describedAs(described).resolve(request("2024-01-01T01:00Z", "latest").build());
        assertThat(topic.calls).doesNotContain("describe").contains("logStart");
        assertThat(PlanJson.write(told)).isEqualTo(PlanJson.write(asked));
        // another topic than the one described is still asked for
        assertThatThrownBy(() -> resolver.describedAs(described).resolve(BackfillRequest.builder("payments")
                .from("earliest").to("latest").build())).isInstanceOf(RequestException.class)
                .hasMessageContaining("topic 'payments' does not exist");
    }

    @Test
    void offsetsAreSnapshotBeforeAnyTimeLookup() {
        topic.log(0).append(hour(0));
        resolve("2024-01-01", "2024-01-02");
        assertThat(topic.calls).containsSubsequence("describe", "logStart", "end:read_committed", "time", "scan");
        assertThat(topic.calls.indexOf("time")).isGreaterThan(topic.calls.lastIndexOf("end:read_committed"));
    }

    @Test
    void aToTimeAfterTheLastRecordRunsToTheEndWithANote() {
        topic.log(0).append(hour(0), hour(1));
        PartitionRange p0 = resolve("earliest", "2024-01-05").partition(0).orElseThrow();
        assertThat(p0.start()).isZero();
        assertThat(p0.end()).isEqualTo(2);
        assertThat(kinds(p0)).containsExactly(Note.Kind.NO_RECORD_AT_OR_AFTER_TO);
        assertThat(p0.notes().get(0).message()).contains("2024-01-05T00:00:00Z").contains("end offset 2");
    }

    @Test
    void aFromTimeAfterTheLastRecordIsAnEmptyRangeAtTheEndWithANote() {
        topic.log(0).append(hour(0), hour(1));
        PartitionRange p0 = resolve("2024-01-02", "latest").partition(0).orElseThrow();
        assertThat(p0.start()).isEqualTo(2);
        assertThat(p0.end()).isEqualTo(2);
        assertThat(p0.isEmpty()).isTrue();
        assertThat(kinds(p0)).containsExactly(Note.Kind.NO_RECORD_AT_OR_AFTER_FROM);
    }

    @Test
    void outOfOrderCreateTimeFollowsListOffsetsSemantics() {
        topic.log(0).append(hour(1), hour(3), hour(2), hour(4));
        PartitionRange p0 = resolve("2024-01-01T02:30Z", "2024-01-01T03:30Z").partition(0).orElseThrow();
        // first offset with ts >= 02:30 is offset 1 (03:00); first with ts >= 03:30 is offset 3 (04:00)
        assertThat(p0.start()).isEqualTo(1);
        assertThat(p0.end()).isEqualTo(3);
        assertThat(resolve("2024-01-01T02:30Z", "2024-01-01T03:30Z").notes())
                .extracting(Note::kind).containsExactly(Note.Kind.CREATE_TIME);
    }

    @Test
    void aTimeLookupThatHitsAMarkerMovesToTheFirstRecordAReaderSees() {
        // a transactional producer replaying old event times: each commit marker carries today's time
        topic.log(0).append(hour(0), hour(1)).marker(NOW).abortedRecords(hour(2)).marker(NOW)
                .append(hour(2), hour(3)).marker(NOW);
        PartitionRange p0 = resolve("2024-01-01T01:30Z", "2024-01-01T03:00Z").partition(0).orElseThrow();
        // ListOffsets says 2 (the first marker) for both times; a reader sees 01:30 <= 02:00 at 5 and 03:00 at 6
        assertThat(p0.start()).isEqualTo(5);
        assertThat(p0.end()).isEqualTo(6);
        assertThat(kinds(p0)).containsExactly(Note.Kind.TIME_LOOKUP_HIT_INVISIBLE, Note.Kind.TIME_LOOKUP_HIT_INVISIBLE);
        assertThat(p0.notes().get(0).message()).contains("ListOffsets answered offset 2")
                .contains("the first record a reader sees at or after that time is at offset 5");
    }

    @Test
    void anEmptyPartitionIsNoted() {
        topic.log(0).append(hour(0));
        PartitionRange p1 = resolve("earliest", "latest").partition(1).orElseThrow();
        assertThat(p1.start()).isZero();
        assertThat(p1.end()).isZero();
        assertThat(kinds(p1)).containsExactly(Note.Kind.EMPTY_PARTITION);
    }

    @Test
    void underReadCommittedTheEndIsTheLastStableOffsetAndAnOpenTransactionIsNoted() {
        topic.log(0).append(hour(0), hour(1), hour(2), hour(3), hour(4)).openTransactionAt(3);
        PartitionRange committed = resolve("earliest", "latest").partition(0).orElseThrow();
        assertThat(committed.end()).isEqualTo(3);
        assertThat(kinds(committed)).containsExactly(Note.Kind.OPEN_TRANSACTION);
        assertThat(committed.notes().get(0).message()).contains("last stable offset at 3").contains("high watermark 5");

        PartitionRange uncommitted = resolver.resolve(request("earliest", "latest")
                .isolationLevel(IsolationLevel.READ_UNCOMMITTED).build()).partition(0).orElseThrow();
        assertThat(uncommitted.end()).isEqualTo(5);
        assertThat(uncommitted.notes()).isEmpty();
    }

    @Test
    void aStartOffsetBelowTheLogStartIsDataLossUnlessAllowed() {
        topic.log(0).append(hour(0), hour(1), hour(2), hour(3)).deleteBelow(2);
        assertThatThrownBy(() -> resolve("offset:0", "latest"))
                .isInstanceOf(DataLossException.class)
                .hasMessage("partition 0: from bound offset 0 is below the log start offset 2; offsets 0 to 1 were "
                        + "deleted (retention or deleteRecords); pass allowDataLoss(true) to backfill what is left from 2");

        Plan plan = resolver.resolve(request("offset:0", "latest").partitions(new TreeSet<>(List.of(0)))
                .allowDataLoss(true).build());
        PartitionRange p0 = plan.partition(0).orElseThrow();
        assertThat(p0.start()).isEqualTo(2);
        assertThat(p0.end()).isEqualTo(4);
        assertThat(kinds(p0)).containsExactly(Note.Kind.START_LOST_TO_RETENTION);
    }

    @Test
    void anEndOffsetBelowTheLogStartMeansTheWholeRangeIsLost() {
        topic.log(0).append(hour(0), hour(1), hour(2), hour(3)).deleteBelow(3);
        assertThatThrownBy(() -> resolve("earliest", "offset:2"))
                .isInstanceOf(DataLossException.class)
                .hasMessageContaining("to bound offset 2 is below the log start offset 3");
        PartitionRange p0 = resolver.resolve(request("earliest", "offset:2").allowDataLoss(true)
                .partitions(new TreeSet<>(List.of(0))).build()).partition(0).orElseThrow();
        assertThat(p0.isEmpty()).isTrue();
        assertThat(kinds(p0)).containsExactly(Note.Kind.END_LOST_TO_RETENTION);
    }

    @Test
    void earliestIsTheLogStartWithoutComplaint() {
        topic.log(0).append(hour(0), hour(1), hour(2)).deleteBelow(1);
        PartitionRange p0 = resolve("earliest", "latest").partition(0).orElseThrow();
        assertThat(p0.start()).isEqualTo(1);
        assertThat(p0.startTime()).contains(hour(1));
        assertThat(p0.notes()).isEmpty();
    }

    @Test
    void aFromTimeOlderThanTheFirstRetainedRecordWarnsThatRetentionMayHaveCutTheRange() {
        topic.log(0).append(hour(0), hour(1), hour(2), hour(3)).deleteBelow(2);
        PartitionRange p0 = resolve("2024-01-01", "latest").partition(0).orElseThrow();
        assertThat(p0.start()).isEqualTo(2);
        assertThat(kinds(p0)).containsExactly(Note.Kind.RANGE_OLDER_THAN_RETAINED);
        assertThat(p0.notes().get(0).message()).contains("offset 2 at 2024-01-01T02:00:00Z");
    }

    @Test
    void anOffsetBeyondTheEndIsClampedWithANote() {
        topic.log(0).append(hour(0), hour(1));
        PartitionRange p0 = resolver.resolve(request("offset:1", "offset:10").partitions(new TreeSet<>(List.of(0)))
                .build()).partition(0).orElseThrow();
        assertThat(p0.start()).isEqualTo(1);
        assertThat(p0.end()).isEqualTo(2);
        assertThat(kinds(p0)).containsExactly(Note.Kind.OFFSET_BEYOND_END);
    }

    @Test
    void mixedBoundsThatCrossOnOnePartitionGiveAnEmptyRangeThere() {
        topic.log(0).append(hour(0), hour(1), hour(2), hour(3), hour(4), hour(5));
        topic.log(1).append(hour(0), hour(0), hour(0), hour(0), hour(0), hour(0), hour(3), hour(4));
        Plan plan = resolve("offset:4", "2024-01-01T02:00Z");
        PartitionRange p0 = plan.partition(0).orElseThrow();
        assertThat(p0.start()).isEqualTo(4);
        assertThat(p0.end()).isEqualTo(4);
        assertThat(kinds(p0)).containsExactly(Note.Kind.FROM_AFTER_TO);
        assertThat(p0.notes().get(0).message()).contains("resolves to offset 4, after to bound '2024-01-01T02:00Z' at offset 2");
        PartitionRange p1 = plan.partition(1).orElseThrow();
        assertThat(p1.start()).isEqualTo(4);
        assertThat(p1.end()).isEqualTo(6);
        assertThat(p1.notes()).isEmpty();
    }

    @Test
    void sparkJsonOffsetsThatCrossAreAnInputError() {
        topic.log(0).append(hour(0), hour(1), hour(2));
        assertThatThrownBy(() -> resolve("{\"orders\":{\"0\":2}}", "{\"orders\":{\"0\":1}}"))
                .isInstanceOf(RequestException.class)
                .hasMessageContaining("partition 0: from bound '{\"orders\":{\"0\":2}}' resolves to offset 2, after to bound");
    }

    @Test
    void sparkJsonSelectsItsPartitionsAndMixesWithTimes() {
        topic.log(0).append(hour(0), hour(1), hour(2));
        topic.log(1).append(hour(0), hour(1), hour(2));
        Plan plan = resolve("{\"orders\":{\"1\":-2}}", "2024-01-01T02:00Z");
        assertThat(plan.partitions()).extracting(PartitionRange::partition).containsExactly(1);
        assertThat(plan.partition(1).orElseThrow().end()).isEqualTo(2);
    }

    @Test
    void aPartitionFilterOutsideTheSparkJsonIsAnInputError() {
        topic.log(0).append(hour(0));
        assertThatThrownBy(() -> resolver.resolve(request("{\"orders\":{\"0\":0}}", "latest")
                .partitions(new TreeSet<>(List.of(0, 1))).build()))
                .isInstanceOf(RequestException.class)
                .hasMessage("partition 1 is selected but the Spark JSON names only partitions 0");
    }

    @Test
    void thePartitionFilterSelectsPartitionsAndRejectsUnknownOnes() {
        topic.log(1).append(hour(0));
        Plan plan = resolver.resolve(request("earliest", "latest").partitions(new TreeSet<>(List.of(1))).build());
        assertThat(plan.partitions()).extracting(PartitionRange::partition).containsExactly(1);
        assertThatThrownBy(() -> resolver.resolve(request("earliest", "latest")
                .partitions(new TreeSet<>(List.of(1, 7))).build()))
                .isInstanceOf(RequestException.class)
                .hasMessage("partition 7 does not exist in topic orders (partitions 0-1)");
    }

    @Test
    void fromAfterToIsRejectedBeforeAskingTheCluster() {
        assertThatThrownBy(() -> resolver.resolve(new BackfillRequest("orders", "2024-01-02", "-3d",
                new Bound.AtTime(Instant.parse("2024-01-02T00:00:00Z")),
                new Bound.RelativeTime(java.time.Duration.ofDays(3)), ZoneOffset.UTC, java.util.Optional.empty(),
                IsolationLevel.READ_COMMITTED, false)))
                .isInstanceOf(RequestException.class)
                .hasMessage("from bound '2024-01-02' (2024-01-02T00:00:00Z) is after to bound '-3d' (2023-12-31T00:00:00Z); "
                        + "the range is [from, to)");
        assertThat(topic.calls).isEmpty();
    }

    @Test
    void fromAfterToIsRejectedWhenBuildingTheRequest() {
        assertThatThrownBy(() -> request("2024-01-02", "2024-01-01").build())
                .isInstanceOf(RequestException.class).hasMessageContaining("is after to bound");
        assertThatThrownBy(() -> request("offset:5", "offset:4").build())
                .isInstanceOf(RequestException.class).hasMessageContaining("is after to bound");
        assertThatThrownBy(() -> request("latest", "earliest").build())
                .isInstanceOf(RequestException.class).hasMessageContaining("from bound latest is after to bound earliest");
        assertThatThrownBy(() -> request("{\"other\":{\"0\":1}}", "latest").build())
                .isInstanceOf(RequestException.class).hasMessageContaining("names topic 'other' but topic is 'orders'");
    }

    @Test
    void relativeTimesResolveOnceAgainstTheClock() {
        topic.log(0).append(NOW.minusSeconds(7200), NOW.minusSeconds(3600), NOW.minusSeconds(60));
        Plan plan = resolve("-90m", "now");
        assertThat(plan.resolvedAt()).isEqualTo(NOW);
        assertThat(plan.fromTime()).contains(NOW.minusSeconds(5400));
        assertThat(plan.partition(0).orElseThrow().start()).isEqualTo(1);
        assertThat(plan.partition(0).orElseThrow().end()).isEqualTo(3);
        assertThat(plan.request().moving()).isTrue();
    }

    @Test
    void logAppendTimeAndCompactionAreNotedOnTheTopic() {
        topic.timestampType = TopicInfo.TimestampType.LOG_APPEND_TIME;
        topic.compacted = true;
        Plan plan = resolve("2024-01-01", "latest");
        assertThat(plan.notes()).extracting(Note::kind)
                .containsExactly(Note.Kind.LOG_APPEND_TIME, Note.Kind.COMPACTED_TOPIC);
        assertThat(plan.notes().get(1).message()).contains("tombstones older than delete.retention.ms (PT24H)");
    }

    @Test
    void offsetOnlyRequestsCarryNoTimestampTypeNote() {
        assertThat(resolve("earliest", "latest").notes()).isEmpty();
    }

    @Test
    void unknownTopicIsAnInputError() {
        assertThatThrownBy(() -> resolver.resolve(BackfillRequest.builder("nope").from("earliest").to("latest").build()))
                .isInstanceOf(RequestException.class)
                .hasMessageContaining("topic 'nope' does not exist");
    }
}
