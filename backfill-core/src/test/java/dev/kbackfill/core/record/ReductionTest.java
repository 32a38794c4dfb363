package dev.kbackfill.core.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class ReductionTest {

    private static Change change(String key, String value, int partition, long offset, long timestamp) {
        return new Change(Map.of("k", key), value == null ? null : Map.of("v", value), partition, offset, timestamp);
    }

    @Test
    void keepsTheHighestOffsetOfEachKeyInAPartition() {
        // offset 12's timestamp went back to 50: the reader stamps it with its log's time so far, 100
        List<Change> reduced = Reduction.lastPerKey(List.of(
                change("a", "1", 0, 10, 100), change("b", "1", 0, 11, 100),
                new Change(Map.of("k", "a"), Map.of("v", "2"), 0, 12, 50, 100)));
        assertThat(reduced).extracting(c -> c.values().get("v")).containsExactly("2", "1");
        assertThat(reduced.get(0).offset()).isEqualTo(12);
    }

    @Test
    void aTombstoneAfterAValueIsTheFinalState() {
        List<Change> reduced = Reduction.lastPerKey(List.of(
                change("a", "1", 0, 1, 1), change("a", null, 0, 2, 2)));
        assertThat(reduced).hasSize(1);
        assertThat(reduced.get(0).isTombstone()).isTrue();
        // write, delete, write again: the last write is what stays
        assertThat(Reduction.lastPerKey(List.of(change("a", "1", 0, 1, 1), change("a", null, 0, 2, 2),
                change("a", "3", 0, 3, 3))).get(0).values()).containsEntry("v", "3");
    }

    @Test
    void acrossPartitionsTheLaterTimestampWins() {
        assertThat(Reduction.lastPerKey(List.of(change("a", "p1", 1, 100, 2000), change("a", "p0", 0, 5, 1000)))
                .get(0).values()).containsEntry("v", "p1");
        assertThat(Reduction.lastPerKey(List.of(change("a", "p1", 1, 100, 1000), change("a", "p0", 0, 5, 2000)))
                .get(0).values()).containsEntry("v", "p0");
    }

    @Test
    void byteKeysCompareByContent() {
        Change a = new Change(Map.of("k", new byte[] {1, 2}), Map.of("v", "x"), 0, 1, 1);
        Change b = new Change(Map.of("k", new byte[] {1, 2}), Map.of("v", "y"), 0, 2, 1);
        assertThat(Reduction.lastPerKey(List.of(a, b))).containsExactly(b);
    }

    @Test
    void aPendingBatchCountsEachSupersededRecordAgainstItsOwnPartition() {
        Reduction.Pending pending = new Reduction.Pending();
        pending.add(change("a", "old", 0, 1, 1000));
        pending.add(change("b", "1", 0, 2, 1000));
        pending.add(change("a", "p1", 1, 7, 2000)); // later in time: supersedes partition 0's record
        pending.add(change("a", "stale", 2, 3, 500)); // earlier in time: itself superseded
        pending.add(change("b", "2", 0, 3, 1000));
        assertThat(pending.size()).isEqualTo(2);
        assertThat(pending.changes()).extracting(c -> c.values().get("v")).containsExactly("p1", "2");
        assertThat(pending.superseded()).containsExactlyInAnyOrderEntriesOf(Map.of(0, 2L, 2, 1L));
    }
}
