package dev.kbackfill.resolver;

/**
 * What is left of one partition's range: offsets {@code [next, end)}, {@code next} being the first offset not yet
 * written (Flink's {@code KafkaPartitionSplit} carries the same). The one form in which progress and ranges move
 * between the plan, a run, the job's stored state and the engines; a split whose {@code next} has reached its
 * {@code end} is done.
 *
 * @param partition the partition number
 * @param next      the first offset still to read and write
 * @param end       the first offset after the range
 */
public record PartitionSplit(int partition, long next, long end) implements java.io.Serializable {

    public PartitionSplit {
        if (partition < 0) {
            throw new IllegalArgumentException("partition must be >= 0: " + partition);
        }
    }

    /** The whole range of a plan's partition, nothing of it written yet. */
    public static PartitionSplit of(PartitionRange range) {
        return new PartitionSplit(range.partition(), range.start(), range.end());
    }

    /** Whether every offset of the range is written. */
    public boolean done() {
        return next >= end;
    }

    /** Offsets still to read: an upper bound on the records. */
    public long remaining() {
        return Math.max(0, end - next);
    }

    /** The same partition's range from {@code offset} on. */
    public PartitionSplit from(long offset) {
        return new PartitionSplit(partition, offset, end);
    }

    /** This split moved on to {@code offset} where that is further: progress never moves back. */
    public PartitionSplit advancedTo(long offset) {
        return offset > next ? from(offset) : this;
    }

    @Override
    public String toString() {
        return "partition " + partition + " [" + next + ", " + end + ")";
    }
}
