package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
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

    private static SinkSettings partitionedBy(String... specs) {
        return new SinkSettings("delta:/t", "t", java.util.Optional.empty(), java.util.Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT)
                .withPartitionBy(List.of(specs));
    }

    @Test
    void aTableIsCreatedFromTheKeyColumnsAloneUnlessItIsPartitionedByAColumnTheBatchLacks() {
        WriteBatch deletes = batch(1, Map.of(0, 2L), delete("k1", 0, 0), delete("k2", 0, 1));
        assertThat(HeldBatches.missingToCreate(deletes, partitionedBy())).isEmpty();
        assertThat(HeldBatches.missingToCreate(deletes, partitionedBy("kafka_partition", "k"))).as("metadata and key")
                .isEmpty();
        assertThat(HeldBatches.missingToCreate(deletes, partitionedBy("A", "day(ts)", "bucket(16, k)")))
                .containsExactly("A", "ts");
        assertThat(HeldBatches.missingToCreate(batch(2, Map.of(1, 5L)), partitionedBy()))
                .as("every record left out: no columns at all").containsExactly("the key");
    }

    /** `--partition-by statuss`: a column a letter from one the records carry is a typo, said before writing. */
    @Test
    void aPartitionColumnALetterFromOneTheFirstBatchCarriesIsNamedAsAMisspelling() {
        WriteBatch values = batch(1, Map.of(0, 2L), upsert("k1", 0, 0, 7));
        assertThat(HeldBatches.misspelt(values, partitionedBy("aa"))).isEmpty(); // "a" is too short to guess from
        SinkSettings typo = partitionedBy("day(A)", "bucket(4, kk)");
        assertThat(HeldBatches.missingToCreate(values, typo)).containsExactly("kk");
        assertThat(HeldBatches.misspelt(values, typo)).as("k is too short to guess from").isEmpty();
        assertThat(HeldBatches.misspelt(values, partitionedBy("statuss"))).isEmpty();
        WriteBatch statuses = batch(1, Map.of(0, 1L), new dev.kbackfill.core.record.Change(Map.of("k", "k1"),
                Map.of("status", "paid"), 0, 0, 0));
        assertThat(HeldBatches.misspelt(statuses, partitionedBy("statuss"))).hasValue("--partition-by partitions by "
                + "column 'statuss', which no record of the first batch carries; did you mean 'status'? (nothing was "
                + "written)");
        assertThat(HeldBatches.misspelt(statuses, partitionedBy("region"))).as("nothing near: held for later records")
                .isEmpty();
    }

    @Test
    void batchesTheTableCannotBeCreatedFromAreHeldAndWrittenWithTheFirstItCanAsOneBatch() {
        SinkSettings settings = partitionedBy("a");
        HeldBatches held = new HeldBatches();
        assertThat(held.waiting("job", "the table", settings)).isEmpty();
        WriteBatch deletes = batch(1, Map.of(0, 2L), delete("k1", 0, 0), delete("k2", 0, 1));
        assertThat(HeldBatches.missingToCreate(deletes, settings)).containsExactly("a");
        assertThat(held.hold(deletes).upserted()).isZero();
        WriteBatch empty = batch(2, Map.of(1, 5L));
        held.hold(empty);
        assertThat(held.holding()).isTrue();
        assertThat(held.heldChanges()).isEqualTo(2);
        assertThat(held.waiting("job", "the table", settings)).hasValueSatisfying(w -> assertThat(w)
                .contains("no record so far carries a, which --partition-by partitions by")
                .contains("nothing records the job or its 2 change(s), deletes included"));

        WriteBatch values = batch(3, Map.of(0, 4L), upsert("k2", 0, 2, 7), upsert("k3", 0, 3, 9));
        assertThat(HeldBatches.missingToCreate(values, settings)).isEmpty();
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
        assertThat(HeldBatches.missingToCreate(create, partitionedBy())).isEmpty();
    }
}
