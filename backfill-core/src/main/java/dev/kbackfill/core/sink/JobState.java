package dev.kbackfill.core.sink;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;

/**
 * What a sink stores for a job, atomically with the data: the frozen plan of the current run and, per partition,
 * the next offset to read.
 *
 * @param job         the job name
 * @param fingerprint what the job was created for ({@link JobIdentity#fingerprint}); a different one is a conflict
 * @param run         the run number, from 1; a moving request that completed gets a new run with a fresh plan
 * @param plan        the run's plan
 * @param nextOffsets per partition of the plan, the first offset not yet written (from {@code start} to {@code end})
 */
public record JobState(String job, String fingerprint, int run, Plan plan, Map<Integer, Long> nextOffsets) {

    public JobState {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(plan, "plan");
        nextOffsets = java.util.Collections.unmodifiableMap(new TreeMap<>(nextOffsets));
    }

    /** A new run at the start of every range of the plan. */
    public static JobState begin(String job, String fingerprint, int run, Plan plan) {
        Map<Integer, Long> next = new TreeMap<>();
        plan.partitions().forEach(r -> next.put(r.partition(), r.start()));
        return new JobState(job, fingerprint, run, plan, next);
    }

    /** Whether every partition has reached the end of its range. */
    public boolean complete() {
        return plan.partitions().stream().allMatch(r -> nextOffsets.getOrDefault(r.partition(), r.start()) >= r.end());
    }

    /** Offsets of the plan still to read. */
    public long remaining() {
        return plan.partitions().stream()
                .mapToLong(r -> r.end() - Math.max(r.start(), nextOffsets.getOrDefault(r.partition(), r.start())))
                .sum();
    }

    /** The range left to read on one partition: {@code [next, end)}. */
    public long next(PartitionRange range) {
        return Math.max(range.start(), nextOffsets.getOrDefault(range.partition(), range.start()));
    }
}
