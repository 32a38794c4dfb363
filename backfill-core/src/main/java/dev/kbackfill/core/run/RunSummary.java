package dev.kbackfill.core.run;

import java.time.Duration;
import java.util.List;

/**
 * The end-of-run account.
 *
 * @param job        the job name
 * @param run        the run number
 * @param partitions per partition
 * @param bytes      key and value bytes read
 * @param batches    batches written
 * @param duration   wall time of the run
 */
public record RunSummary(String job, int run, List<PartitionStats> partitions, long bytes, long batches,
                         Duration duration) {

    public RunSummary {
        partitions = List.copyOf(partitions);
    }

    public long read() {
        return partitions.stream().mapToLong(PartitionStats::read).sum();
    }

    public long written() {
        return partitions.stream().mapToLong(PartitionStats::written).sum();
    }

    public long keptOut() {
        return partitions.stream().mapToLong(PartitionStats::keptOut).sum();
    }

    public long superseded() {
        return partitions.stream().mapToLong(PartitionStats::superseded).sum();
    }

    public long filtered() {
        return partitions.stream().mapToLong(PartitionStats::filtered).sum();
    }

    public long rejected() {
        return partitions.stream().mapToLong(PartitionStats::rejected).sum();
    }

    public long lost() {
        return partitions.stream().mapToLong(PartitionStats::lost).sum();
    }

    /** Records read per second. */
    public double recordsPerSecond() {
        double s = duration.toNanos() / 1e9;
        return s <= 0 ? 0 : read() / s;
    }
}
