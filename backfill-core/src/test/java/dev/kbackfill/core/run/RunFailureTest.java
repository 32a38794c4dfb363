package dev.kbackfill.core.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.resolver.PartitionSplit;
import org.junit.jupiter.api.Test;

/** Where a stopped run stands, said from what is left of each partition. */
class RunFailureTest {

    @Test
    void theUnfinishedPartitionsAreNamedInOrderWithWhereARerunResumes() {
        String where = RunFailure.where(List.of(new PartitionSplit(2, 40, 50), new PartitionSplit(0, 9, 9),
                new PartitionSplit(1, 5, 9)));
        assertThat(where).isEqualTo("stopped with partition 1 at offset 5 of [.., 9), partition 2 at offset 40 of "
                + "[.., 50) committed; a rerun resumes there");
        assertThat(RunFailure.where(List.of(new PartitionSplit(0, 9, 9)))).isEqualTo(
                "stopped with every partition written to its end");
    }

    @Test
    void aJobStateSaysWhatIsLeftOfEachPartitionOfItsPlan() {
        // the plan: partitions 2, 1, 0, each [0, 10)
        List<dev.kbackfill.resolver.PartitionRange> ranges = new java.util.ArrayList<>();
        for (int p = 2; p >= 0; p--) {
            ranges.add(new dev.kbackfill.resolver.PartitionRange(p, 0, 10, 0, 10, java.util.Optional.empty(), List.of()));
        }
        dev.kbackfill.resolver.Plan plan = new dev.kbackfill.resolver.Plan(dev.kbackfill.resolver.BackfillRequest
                .builder("orders").from("2024-01-01").to("2024-01-02").build(),
                java.time.Instant.parse("2024-01-03T00:00:00Z"), java.util.Optional.empty(), java.util.Optional.empty(),
                "cluster", "topic-id", dev.kbackfill.resolver.TopicInfo.TimestampType.CREATE_TIME, ranges, List.of());
        JobState state = JobState.begin("job", "fingerprint", 1, plan).advancedTo(Map.of(1, 4L, 2, 10L));
        assertThat(state.rest()).containsExactlyInAnyOrder(new PartitionSplit(0, 0, 10), new PartitionSplit(1, 4, 10),
                new PartitionSplit(2, 10, 10));
        assertThat(state.rest().stream().filter(s -> !s.done()).mapToLong(PartitionSplit::remaining).sum())
                .isEqualTo(state.remaining());
        assertThat(PartitionStats.untouched(new PartitionSplit(1, 4, 10)).rest()).isEqualTo(new PartitionSplit(1, 4, 10));
    }
}
