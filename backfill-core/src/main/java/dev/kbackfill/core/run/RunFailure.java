package dev.kbackfill.core.run;

/**
 * A run stopped before the end of its plan. The message says why and where each unfinished partition stands
 * (its committed next offset), which is where a rerun resumes.
 */
public final class RunFailure extends RuntimeException {

    private final transient RunSummary summary;

    public RunFailure(String message, Throwable cause) {
        this(message, cause, null);
    }

    /**
     * Where a stopped run stands, for its message: {@code stopped with partition 0 at offset 5 of [.., 9) committed;
     * a rerun resumes there}, or that every partition is written to its end.
     *
     * @param splits what is left of each partition, in any order
     */
    public static String where(java.util.Collection<dev.kbackfill.resolver.PartitionSplit> splits) {
        java.util.List<String> parts = new java.util.ArrayList<>();
        splits.stream().sorted(java.util.Comparator.comparingInt(dev.kbackfill.resolver.PartitionSplit::partition))
                .filter(s -> !s.done())
                .forEach(s -> parts.add("partition " + s.partition() + " at offset " + s.next() + " of [.., " + s.end()
                        + ")"));
        return parts.isEmpty() ? "stopped with every partition written to its end"
                : "stopped with " + String.join(", ", parts) + " committed; a rerun resumes there";
    }

    /** @param summary what the run committed before it stopped, or null */
    public RunFailure(String message, Throwable cause, RunSummary summary) {
        super(message, cause);
        this.summary = summary;
    }

    /** What the run committed before it stopped, where known (else null). */
    public RunSummary summary() {
        return summary;
    }
}
