package dev.kbackfill.core.run;

/**
 * What a run did on one partition. Every record read is accounted for: written (as part of the final state of
 * its key), kept out by the target (it holds a newer version of the key, or the key under insert-only),
 * superseded by a later record of its key in the same batch, filtered, or rejected.
 *
 * @param partition  the partition
 * @param read       records read in the range
 * @param superseded records replaced by a later record of the same key before writing
 * @param filtered   records deliberately not written (outside the strict time window, ignored tombstones)
 * @param rejected   records that could not be decoded, skipped or sent to the dead-letter destination
 * @param written    changes applied (upserts and deletes)
 * @param keptOut    changes the target kept out: it holds a newer version of the key (newer-wins, a delete
 *                   included), or the key itself (insert-only)
 * @param lost       offsets skipped because they were deleted before they could be read (only with loss allowed)
 * @param next       the next offset to read: where the run stands
 * @param end        the end of the range
 * @param late       records read whose log time lies above their own timestamp: their producer's clock ran behind
 *                   their log, so the version rule placed them by their log's time (docs/semantics.md)
 * @param refused    of the rejected records, those that decoded but held a value the target cannot hold (the sink
 *                   refused them; their keys keep their last record it accepted)
 * @param supersededInLog changes not written because the log holds a later record of their key after the range's
 *                   end: a run beside a live writer, which has written, or will write, that record (never counted as
 *                   written or kept out)
 */
public record PartitionStats(int partition, long read, long superseded, long filtered, long rejected, long written,
                             long keptOut, long lost, long next, long end, long late, long refused,
                             long supersededInLog)
        implements java.io.Serializable {

    /** Counts of a run that did not look at the log after its range. */
    public PartitionStats(int partition, long read, long superseded, long filtered, long rejected, long written,
                          long keptOut, long lost, long next, long end, long late, long refused) {
        this(partition, read, superseded, filtered, rejected, written, keptOut, lost, next, end, late, refused, 0);
    }

    /** Counts without records the sink refused. */
    public PartitionStats(int partition, long read, long superseded, long filtered, long rejected, long written,
                          long keptOut, long lost, long next, long end, long late) {
        this(partition, read, superseded, filtered, rejected, written, keptOut, lost, next, end, late, 0);
    }

    /** Counts without late records. */
    public PartitionStats(int partition, long read, long superseded, long filtered, long rejected, long written,
                          long keptOut, long lost, long next, long end) {
        this(partition, read, superseded, filtered, rejected, written, keptOut, lost, next, end, 0);
    }

    /** Offsets of the plan not committed yet. */
    public long left() {
        return Math.max(0, end - next);
    }

    /** This partition's counts and another part's of the same partition (an engine's tasks, attempts): summed. */
    public PartitionStats plus(PartitionStats other) {
        return new PartitionStats(partition, read + other.read, superseded + other.superseded, filtered + other.filtered,
                rejected + other.rejected, written + other.written, keptOut + other.keptOut, lost + other.lost,
                Math.max(next, other.next), end, late + other.late, refused + other.refused,
                supersededInLog + other.supersededInLog);
    }

    /** A partition that this run (or wave) did not touch: nothing counted, standing where {@code rest} says. */
    public static PartitionStats untouched(dev.kbackfill.resolver.PartitionSplit rest) {
        return new PartitionStats(rest.partition(), 0, 0, 0, 0, 0, 0, 0, rest.next(), rest.end());
    }

    /** Where the partition stands: what is left of its range. */
    public dev.kbackfill.resolver.PartitionSplit rest() {
        return new dev.kbackfill.resolver.PartitionSplit(partition, next, end);
    }
}
