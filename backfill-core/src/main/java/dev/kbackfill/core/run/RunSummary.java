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
 * @param warnings   what people should know of the run that is not a failure (an option naming a field no record
 *                   carried)
 */
public record RunSummary(String job, int run, List<PartitionStats> partitions, long bytes, long batches,
                         Duration duration, List<String> warnings) {

    public RunSummary {
        partitions = List.copyOf(partitions);
        warnings = List.copyOf(warnings);
    }

    /** A summary without warnings. */
    public RunSummary(String job, int run, List<PartitionStats> partitions, long bytes, long batches,
                      Duration duration) {
        this(job, run, partitions, bytes, batches, duration, List.of());
    }

    /** This summary with {@code more} warnings after its own (those it has already left out). */
    public RunSummary withWarnings(List<String> more) {
        java.util.LinkedHashSet<String> all = new java.util.LinkedHashSet<>(warnings);
        all.addAll(more);
        return all.size() == warnings.size() ? this
                : new RunSummary(job, run, partitions, bytes, batches, duration, List.copyOf(all));
    }

    /** Offsets of the plan not committed yet, over every partition. */
    public long left() {
        return partitions.stream().mapToLong(PartitionStats::left).sum();
    }

    /** Two attempts of one run as one: counts added, where each partition stands taken from the later. */
    public static RunSummary merge(RunSummary earlier, RunSummary later) {
        java.util.Map<Integer, PartitionStats> before = new java.util.HashMap<>();
        earlier.partitions().forEach(p -> before.put(p.partition(), p));
        List<PartitionStats> merged = new java.util.ArrayList<>();
        for (PartitionStats p : later.partitions()) {
            PartitionStats e = before.get(p.partition());
            merged.add(e == null ? p : new PartitionStats(p.partition(), e.read() + p.read(), e.superseded() + p.superseded(),
                    e.filtered() + p.filtered(), e.rejected() + p.rejected(), e.written() + p.written(),
                    e.keptOut() + p.keptOut(), e.lost() + p.lost(), p.next(), p.end(), e.late() + p.late(),
                    e.refused() + p.refused(), e.supersededInLog() + p.supersededInLog()));
        }
        java.util.LinkedHashSet<String> warnings = new java.util.LinkedHashSet<>(earlier.warnings());
        warnings.addAll(later.warnings());
        return new RunSummary(later.job(), later.run(), merged, earlier.bytes() + later.bytes(),
                earlier.batches() + later.batches(), earlier.duration().plus(later.duration()), List.copyOf(warnings));
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

    /** Changes the log after the range shows superseded ({@link PartitionStats#supersededInLog()}). */
    public long supersededInLog() {
        return partitions.stream().mapToLong(PartitionStats::supersededInLog).sum();
    }

    public long filtered() {
        return partitions.stream().mapToLong(PartitionStats::filtered).sum();
    }

    public long rejected() {
        return partitions.stream().mapToLong(PartitionStats::rejected).sum();
    }

    /** Rejected records that the sink refused ({@link PartitionStats#refused()}); the rest could not be decoded. */
    public long refused() {
        return partitions.stream().mapToLong(PartitionStats::refused).sum();
    }

    /** Records whose log time lies above their own timestamp ({@link PartitionStats#late()}). */
    public long late() {
        return partitions.stream().mapToLong(PartitionStats::late).sum();
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
