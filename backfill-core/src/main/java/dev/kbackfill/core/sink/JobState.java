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
 * @param fingerprint what the job was created for ({@link JobSpec#fingerprint}, or for a job stored before specs
 *                    {@link JobIdentity#fingerprint} of its request); a different one is a conflict
 * @param run         the run number, from 1; a moving request that completed gets a new run with a fresh plan
 * @param plan        the run's plan
 * @param nextOffsets per partition of the plan, the first offset not yet written (from {@code start} to {@code end})
 * @param spec        what shapes the job's output, part by part ({@link JobSpec#UNKNOWN} for a job stored before)
 * @param incarnation this incarnation of the job: an id chosen at its first run and kept by its later runs, new
 *                    after a {@code reset} (which forgets the state); empty for a job stored before incarnations.
 *                    The ids that make writes idempotent ({@link #runId()}) derive from it, so none is ever reused
 *                    after a reset
 */
public record JobState(String job, String fingerprint, int run, Plan plan, Map<Integer, Long> nextOffsets,
                       JobSpec spec, String incarnation) {

    public JobState {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(plan, "plan");
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(incarnation, "incarnation");
        nextOffsets = java.util.Collections.unmodifiableMap(new TreeMap<>(nextOffsets));
    }

    /** A state stored before incarnations. */
    public JobState(String job, String fingerprint, int run, Plan plan, Map<Integer, Long> nextOffsets, JobSpec spec) {
        this(job, fingerprint, run, plan, nextOffsets, spec, "");
    }

    /** A state without a spec, as stored before jobs had one. */
    public JobState(String job, String fingerprint, int run, Plan plan, Map<Integer, Long> nextOffsets) {
        this(job, fingerprint, run, plan, nextOffsets, JobSpec.UNKNOWN);
    }

    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    /** A new incarnation's id: 12 random base-36 characters. */
    public static String newIncarnation() {
        StringBuilder id = new StringBuilder();
        for (int i = 0; i < 12; i++) {
            id.append(Character.forDigit(RANDOM.nextInt(36), 36));
        }
        return id.toString();
    }

    /** The first run of a new incarnation of a job bound to {@code spec}, at the start of every range of the plan. */
    public static JobState begin(String job, JobSpec spec, int run, Plan plan) {
        return begin(job, spec, run, plan, newIncarnation());
    }

    /** A run of the incarnation {@code incarnation} (a later run keeps its job's), at the start of every range. */
    public static JobState begin(String job, JobSpec spec, int run, Plan plan, String incarnation) {
        Map<Integer, Long> next = new TreeMap<>();
        plan.partitions().forEach(r -> next.put(r.partition(), r.start()));
        return new JobState(job, spec.fingerprint(), run, plan, next, spec, incarnation);
    }

    /** A new run with only a fingerprint (tests, callers without a spec). */
    public static JobState begin(String job, String fingerprint, int run, Plan plan) {
        Map<Integer, Long> next = new TreeMap<>();
        plan.partitions().forEach(r -> next.put(r.partition(), r.start()));
        return new JobState(job, fingerprint, run, plan, next, JobSpec.UNKNOWN, newIncarnation());
    }

    /** The same run with progress moved to {@code next} (partitions not named keep theirs). */
    public JobState advancedTo(Map<Integer, Long> next) {
        Map<Integer, Long> merged = new TreeMap<>(nextOffsets);
        merged.putAll(next);
        return new JobState(job, fingerprint, run, plan, merged, spec, incarnation);
    }

    /**
     * This run of this incarnation, for idempotency ids (a Spark run's Delta {@code txnAppId}, its sub-jobs):
     * {@code INCARNATION-runN}, or {@code runN} for a job stored before incarnations. Unique across resets.
     */
    public String runId() {
        return (incarnation.isEmpty() ? "" : incarnation + "-") + "run" + run;
    }

    /** Whether every partition has reached the end of its range. */
    public boolean complete() {
        return plan.partitions().stream().allMatch(r -> nextOffsets.getOrDefault(r.partition(), r.start()) >= r.end());
    }

    /** Whether nothing of the job was ever committed: its first run, at the start of every partition. */
    public boolean untouched() {
        return run <= 1 && plan.partitions().stream()
                .allMatch(r -> nextOffsets.getOrDefault(r.partition(), r.start()) <= r.start());
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

    /** What is left of one of the plan's partitions. */
    public dev.kbackfill.resolver.PartitionSplit rest(PartitionRange range) {
        return new dev.kbackfill.resolver.PartitionSplit(range.partition(), next(range), range.end());
    }

    /** What is left of each of the plan's partitions, in the plan's order (done ones included). */
    public java.util.List<dev.kbackfill.resolver.PartitionSplit> rest() {
        return plan.partitions().stream().map(this::rest).toList();
    }
}
