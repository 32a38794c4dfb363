package dev.kbackfill.resolver;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Where a connector archived a topic (Kafka Connect's S3 sinks write every record to object storage): the older part
 * of a range whose start retention deleted from the log. {@link RangeResolver#withArchive} plans a range from the
 * archive's first record to the topic's last: offsets below the partition's log start (at plan time) are read from
 * the archive, the rest from the topic, each offset once.
 *
 * <p>An archive speaks in the topic's own offsets: what it holds of a partition is the half-open range
 * {@link Extent#first()} to {@link Extent#end()}. Where the archive's layout records no offset per record (Confluent's
 * S3 sink), a record's offset is its file's start offset plus its index, which holds only where the archived log had
 * no gaps: {@link Extent#exactOffsets()} says which.
 */
public interface Archive {

    /** Where the archive is, for messages and notes, e.g. {@code s3a://bucket/topics}. */
    String location();

    /** How the archive was written, for notes, e.g. {@code Aiven S3 sink, jsonl}. */
    String layout();

    /**
     * What the archive holds of each of {@code partitions} ({@code topic}'s); a partition it holds nothing of is not in
     * the answer.
     *
     * @throws RequestException naming the file, for an archive that cannot be read as its layout says (a file whose
     *                          name and content disagree, two files covering one offset, a gap between files whose
     *                          offsets are inferred, no file of the topic at all)
     */
    Map<Integer, Extent> extents(String topic, Set<Integer> partitions);

    /**
     * The first archived record of {@code partition} whose timestamp is at or after {@code time}, among offsets below
     * {@code below}; empty when none is. Only asked where {@link Extent#timestamps()} is true.
     */
    Optional<OffsetSource.TimestampedOffset> firstAtOrAfter(String topic, int partition, Instant time, long below);

    /**
     * What the archive holds of one partition.
     *
     * @param first       the first archived offset
     * @param end         one past the last archived offset
     * @param records     the records archived (fewer than {@code end - first} where exact offsets skip some)
     * @param files       the files they are in
     * @param exactOffsets whether every record carries its offset (else offsets are inferred from file names)
     * @param timestamps  whether every record carries its timestamp (time bounds can resolve in the archive)
     */
    record Extent(long first, long end, long records, int files, boolean exactOffsets, boolean timestamps) {
        public Extent {
            if (first < 0 || end < first) {
                throw new IllegalArgumentException("not an archived range [" + first + ", " + end + ")");
            }
        }
    }
}
