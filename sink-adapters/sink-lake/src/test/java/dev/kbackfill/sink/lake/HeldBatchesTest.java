package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.sink.WriteBatch;
import org.junit.jupiter.api.Test;

class HeldBatchesTest {

    private static Change upsert(String key, int partition, long offset, long a) {
        return new Change(Map.of("k", key), Map.of("a", a), partition, offset, 1000 + offset);
    }

    private static Change delete(String key, int partition, long offset) {
        return new Change(Map.of("k", key), null, partition, offset, 1000 + offset);
    }

    private static WriteBatch batch(long sequence, Map<Integer, Long> next, Change... changes) {
        List<Change> list = List.of(changes);
        return new WriteBatch("job", 1, sequence, list, RowShape.of(list), next, "t");
    }

    @Test
    void batchesWithoutValuesAreHeldAndWrittenWithTheFirstThatHasValuesAsOneBatch() {
        HeldBatches held = new HeldBatches();
        WriteBatch deletes = batch(1, Map.of(0, 2L), delete("k1", 0, 0), delete("k2", 0, 1));
        assertThat(HeldBatches.lacksValues(deletes)).isTrue();
        assertThat(held.hold(deletes).upserted()).isZero();
        WriteBatch empty = batch(2, Map.of(1, 5L));
        assertThat(HeldBatches.lacksValues(empty)).as("every record left out: no columns at all").isTrue();
        held.hold(empty);
        assertThat(held.holding()).isTrue();
        assertThat(held.heldChanges()).isEqualTo(2);

        WriteBatch values = batch(3, Map.of(0, 4L), upsert("k2", 0, 2, 7), upsert("k3", 0, 3, 9));
        assertThat(HeldBatches.lacksValues(values)).isFalse();
        WriteBatch merged = held.release(values);
        assertThat(held.holding()).isFalse();
        assertThat(merged.sequence()).isEqualTo(3);
        assertThat(merged.nextOffsets()).as("the later progress, every partition").isEqualTo(Map.of(0, 4L, 1, 5L));
        assertThat(merged.changes()).extracting(c -> c.key().get("k") + "@" + c.offset() + (c.isTombstone() ? "-" : "+"))
                .containsExactlyInAnyOrder("k1@0-", "k2@2+", "k3@3+");
        assertThat(merged.shape().valueColumns()).extracting(c -> c.name()).containsExactly("a");
        assertThat(held.release(values)).as("nothing held: the batch as it is").isSameAs(values);
    }

    @Test
    void aBatchOfNoChangesThatNamesColumnsIsATableToCreate() {
        WriteBatch create = new WriteBatch("job", 1, 0, List.of(), RowShape.of(List.of(delete("k1", 0, 0))), Map.of(), "t");
        assertThat(HeldBatches.lacksValues(create)).isFalse();
    }
}
