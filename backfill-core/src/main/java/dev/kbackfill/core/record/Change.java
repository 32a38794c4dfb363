package dev.kbackfill.core.record;

import java.util.Map;
import java.util.Objects;

/**
 * A decoded record: the state of one key after it, as a sink applies it.
 *
 * @param key       the primary key columns, in key order
 * @param values    the value columns, or null when the record is a tombstone (delete the key)
 * @param partition the source partition
 * @param offset    the source offset
 * @param timestamp the source timestamp, epoch milliseconds
 * @param logTime   the source record's log time (the version rule's time: the highest timestamp of its partition at
 *                  or before it), epoch milliseconds
 * @param source    the raw record it was decoded from, for sinks that copy records as they are (the Kafka sink);
 *                  null for changes made by hand
 * @param versionField the value of the job's version field ({@link dev.kbackfill.core.version.VersionField}), or
 *                  null: the job has none, or a tombstone found none before it
 */
public record Change(Map<String, Object> key, Map<String, Object> values, int partition, long offset,
                     long timestamp, long logTime, SourceRecord source, Comparable<?> versionField) {

    /** A change without a version field. */
    public Change(Map<String, Object> key, Map<String, Object> values, int partition, long offset, long timestamp,
                  long logTime, SourceRecord source) {
        this(key, values, partition, offset, timestamp, logTime, source, null);
    }

    /** A change made by hand, without its raw record, whose log time is its timestamp. */
    public Change(Map<String, Object> key, Map<String, Object> values, int partition, long offset, long timestamp) {
        this(key, values, partition, offset, timestamp, timestamp, null);
    }

    /** A change made by hand with its log time, without its raw record. */
    public Change(Map<String, Object> key, Map<String, Object> values, int partition, long offset, long timestamp,
                  long logTime) {
        this(key, values, partition, offset, timestamp, logTime, null);
    }

    /** A change decoded from {@code source}: its coordinates and log time are the record's. */
    public Change(Map<String, Object> key, Map<String, Object> values, int partition, long offset, long timestamp,
                  SourceRecord source) {
        this(key, values, partition, offset, timestamp, source == null ? timestamp : source.logTime(), source);
    }

    /**
     * Takes the maps as they are (a decoder hands over maps it no longer touches; copying every record's maps cost
     * a tenth of a run's CPU) and exposes them read-only.
     */
    public Change {
        Objects.requireNonNull(key, "key");
        key = readOnly(key);
        values = values == null ? null : readOnly(values);
    }

    /** The values of a change whose value is not decoded yet: compared by identity, never read. */
    private static final Map<String, Object> NOT_DECODED = java.util.Collections.unmodifiableMap(new java.util.HashMap<>());

    /**
     * A record with only its key decoded: enough to reduce a batch by key, so that only the record that survives
     * for each key has its value decoded ({@link RecordDecoder#decode} of {@link #source()}).
     */
    public static Change undecoded(Map<String, Object> key, SourceRecord record) {
        Objects.requireNonNull(record, "record");
        return new Change(key, record.value() == null ? null : NOT_DECODED, record.partition(), record.offset(),
                record.timestamp(), record.logTime(), record);
    }

    /** Whether {@link #values()} holds the decoded value (false only for {@link #undecoded} non-tombstones). */
    public boolean isDecoded() {
        return values != NOT_DECODED;
    }

    private static Map<String, Object> readOnly(Map<String, Object> map) {
        return map instanceof Columns || map instanceof ScalarColumn || map == NOT_DECODED ? map
                : java.util.Collections.unmodifiableMap(map);
    }

    /** The same change without its raw record, for sinks that do not copy records: a batch holds less. */
    public Change withoutSource() {
        return source == null ? this : new Change(key, values, partition, offset, timestamp, logTime, null, versionField);
    }

    /** The same change with {@code field} as its version field's value. */
    public Change withVersionField(Comparable<?> field) {
        return new Change(key, values, partition, offset, timestamp, logTime, source, field);
    }

    /** The change's version: its source coordinates and log time, its topic unknown (a run reads one topic). */
    public dev.kbackfill.core.version.Version version() {
        return new dev.kbackfill.core.version.Version(null, partition, offset, timestamp, logTime, versionField);
    }

    public boolean isTombstone() {
        return values == null;
    }
}
