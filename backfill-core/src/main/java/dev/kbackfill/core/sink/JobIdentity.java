package dev.kbackfill.core.sink;

import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.PartitionFilter;

/** Job names and fingerprints: the same command line maps to the same job. */
public final class JobIdentity {

    private JobIdentity() {
    }

    /**
     * The fingerprint of a request alone, as jobs stored it before they had a {@link JobSpec}: still compared for
     * such jobs.
     */
    public static String fingerprint(BackfillRequest r) {
        return sha256(describe(r)).substring(0, 16);
    }

    /** A readable default job name: the topic and a short hash of the request as typed and the sink, e.g. {@code orders-3f9a2c1e}. */
    public static String defaultName(BackfillRequest r, String sinkTarget) {
        String topic = r.topic().replaceAll("[^A-Za-z0-9._-]", "_");
        return topic + "-" + sha256(describe(r) + "\u0000" + sinkTarget).substring(0, 8);
    }

    /** The request as one line for people: {@code --topic orders --from 2024-01-01 --to 2024-01-02}. */
    public static String describe(BackfillRequest r) {
        StringBuilder sb = new StringBuilder("--topic ").append(r.topic()).append(" --from ").append(r.fromText())
                .append(" --to ").append(r.toText());
        if (!r.zone().getId().equals("Z") && !r.zone().getId().equals("UTC")) {
            sb.append(" --zone ").append(r.zone().getId());
        }
        r.partitions().ifPresent(p -> sb.append(" --partitions ").append(PartitionFilter.format(p)));
        if (r.isolationLevel() != org.apache.kafka.common.IsolationLevel.READ_COMMITTED) {
            sb.append(" (").append(r.isolationLevel()).append(")");
        }
        return sb.toString();
    }

    /**
     * The request without its later bound: what binds a {@code continue:} job, whose {@code --to} moves from run to
     * run.
     */
    public static String describeFrom(BackfillRequest r) {
        String all = describe(r);
        String to = " --to " + r.toText();
        int at = all.indexOf(to);
        return at < 0 ? all : all.substring(0, at) + all.substring(at + to.length());
    }

    private static String sha256(String text) {
        return JobSpec.sha256(text);
    }
}
