package dev.kbackfill.resolver;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A resolved backfill: for every selected partition the half-open offset range {@code [start, end)} to read,
 * with the notes that explain each adjustment, and what it was resolved against.
 *
 * <p>A plan is frozen: {@code latest} and relative times were resolved once, at {@link #resolvedAt()}, like
 * Spark's {@code endingOffsets}. Store it with {@link #toJson()} and read it back with {@link #fromJson(String)};
 * {@link #topicId()} tells a stored plan apart from a deleted and recreated topic of the same name.
 *
 * @param request       what was asked
 * @param resolvedAt    when the plan was resolved (relative times are measured from here)
 * @param fromTime      the {@code from} time, where {@code from} is a time
 * @param toTime        the {@code to} time, where {@code to} is a time
 * @param clusterId     the cluster the plan was resolved against
 * @param topicId       the topic's id at resolution
 * @param timestampType the topic's {@code message.timestamp.type}
 * @param partitions    one range per selected partition, by partition number
 * @param notes         notes about the topic as a whole
 */
public record Plan(BackfillRequest request, Instant resolvedAt, Optional<Instant> fromTime,
                   Optional<Instant> toTime, String clusterId, String topicId,
                   TopicInfo.TimestampType timestampType, List<PartitionRange> partitions, List<Note> notes) {

    /** The version of the JSON document written by {@link #toJson()}. */
    public static final int FORMAT_VERSION = 1;

    public Plan {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(resolvedAt, "resolvedAt");
        Objects.requireNonNull(fromTime, "fromTime");
        Objects.requireNonNull(toTime, "toTime");
        Objects.requireNonNull(topicId, "topicId");
        Objects.requireNonNull(timestampType, "timestampType");
        partitions = partitions.stream()
                .sorted(java.util.Comparator.comparingInt(PartitionRange::partition))
                .toList();
        notes = List.copyOf(notes);
    }

    public String topic() {
        return request.topic();
    }

    /** The range of one partition, if the plan covers it. */
    public Optional<PartitionRange> partition(int partition) {
        return partitions.stream().filter(r -> r.partition() == partition).findFirst();
    }

    /** The sum of {@link PartitionRange#span()}: an upper bound on the records the plan reads. */
    public long totalSpan() {
        return partitions.stream().mapToLong(PartitionRange::span).sum();
    }

    /** Every note: the topic's, then each partition's. */
    public List<Note> allNotes() {
        java.util.ArrayList<Note> all = new java.util.ArrayList<>(notes);
        partitions.forEach(r -> all.addAll(r.notes()));
        return all;
    }

    /** This plan as a versioned JSON document. */
    public String toJson() {
        return PlanJson.write(this);
    }

    /**
     * Reads a plan written by {@link #toJson()}.
     *
     * @throws RequestException if the document is not a plan, or of a newer format version
     */
    public static Plan fromJson(String json) {
        return PlanJson.read(json);
    }

    /** Spark's {@code startingOffsets} option for this plan, e.g. {@code {"orders":{"0":23,"1":40}}}. */
    public String sparkStartingOffsets() {
        return PlanJson.sparkOffsets(this, true);
    }

    /** Spark's {@code endingOffsets} option (exclusive, like {@link PartitionRange#end()}). */
    public String sparkEndingOffsets() {
        return PlanJson.sparkOffsets(this, false);
    }
}
