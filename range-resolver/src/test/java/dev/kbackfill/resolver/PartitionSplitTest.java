package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/** What is left of a partition's range: [next, end). */
class PartitionSplitTest {

    @Test
    void aPlansRangeIsASplitWithNothingWrittenAndMovesOnFromAnOffset() {
        PartitionRange range = new PartitionRange(3, 10, 15, 0, 20, Optional.empty(), List.of());
        PartitionSplit whole = PartitionSplit.of(range);
        assertThat(whole).isEqualTo(new PartitionSplit(3, 10, 15));
        assertThat(whole.remaining()).isEqualTo(5);
        assertThat(whole.done()).isFalse();
        PartitionSplit rest = whole.from(14);
        assertThat(rest).isEqualTo(new PartitionSplit(3, 14, 15));
        assertThat(rest.remaining()).isEqualTo(1);
        assertThat(whole.from(15).done()).isTrue();
        assertThat(whole.from(16).remaining()).as("past the end (a range read beyond by a compaction gap)").isZero();
        assertThat(rest).hasToString("partition 3 [14, 15)");
        assertThat(whole.advancedTo(12)).isEqualTo(new PartitionSplit(3, 12, 15));
        assertThat(rest.advancedTo(12)).as("progress never moves back").isSameAs(rest);
    }

    @Test
    void anEmptyRangeIsDoneFromTheStart() {
        assertThat(PartitionSplit.of(new PartitionRange(0, 7, 7, 0, 7, Optional.empty(), List.of())).done()).isTrue();
    }

    @Test
    void aNegativePartitionIsRefused() {
        assertThatThrownBy(() -> new PartitionSplit(-1, 0, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
