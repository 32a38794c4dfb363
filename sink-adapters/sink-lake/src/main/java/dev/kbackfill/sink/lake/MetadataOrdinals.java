package dev.kbackfill.sink.lake;

import java.util.function.ToIntFunction;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.version.Version;

/**
 * Where the metadata columns sit in a lake table's rows (-1: the table has no such column), and the version a row
 * holds: rows are arrays of physical values (timestamps in microseconds), one per column of the table.
 */
public record MetadataOrdinals(int topic, int partition, int offset, int timestamp, int logTime, int deleted,
                               int version) {

    /** Where the metadata columns {@code meta} names sit, by {@code indexOf} (a column's ordinal, or -1). */
    public static MetadataOrdinals of(ToIntFunction<String> indexOf, SinkSettings.MetadataColumns meta) {
        return new MetadataOrdinals(indexOf.applyAsInt(meta.topic()), indexOf.applyAsInt(meta.partition()),
                indexOf.applyAsInt(meta.offset()), indexOf.applyAsInt(meta.timestamp()),
                indexOf.applyAsInt(meta.logTime()), indexOf.applyAsInt(meta.deleted()),
                indexOf.applyAsInt(meta.version()));
    }

    /** The version a stored row carries, or null for a row no backfill wrote. */
    public Version version(Object[] stored) {
        if (offset < 0 || partition < 0 || timestamp < 0 || stored[offset] == null) {
            return null;
        }
        long ts = Math.floorDiv(((Number) stored[timestamp]).longValue(), 1000);
        Object lt = logTime >= 0 ? stored[logTime] : null; // none: a row from before log times
        return new Version(topic >= 0 ? (String) stored[topic] : null,
                (int) ((Number) stored[partition]).longValue(), ((Number) stored[offset]).longValue(),
                ts, lt == null ? ts : Math.floorDiv(((Number) lt).longValue(), 1000),
                version >= 0 ? (Comparable<?>) stored[version] : null);
    }

    /** Whether a column is one of these metadata columns. */
    public boolean isMetadata(int ordinal) {
        return ordinal == topic || ordinal == partition || ordinal == offset || ordinal == timestamp
                || ordinal == logTime || ordinal == deleted || ordinal == version;
    }

    /** The metadata columns the table has, as ordinals (for a probe that reads them with the key). */
    public int[] present() {
        return java.util.stream.IntStream.of(topic, partition, offset, timestamp, logTime, deleted, version)
                .filter(o -> o >= 0).toArray();
    }

    /** Writes the change's coordinates and version into the row's metadata columns. */
    public void stamp(Object[] row, Change c, String topicName) {
        if (topic >= 0) {
            row[topic] = topicName;
        }
        if (partition >= 0) {
            row[partition] = (long) c.partition();
        }
        if (offset >= 0) {
            row[offset] = c.offset();
        }
        if (timestamp >= 0) {
            row[timestamp] = c.timestamp() * 1000;
        }
        if (logTime >= 0) {
            row[logTime] = c.logTime() * 1000;
        }
        if (version >= 0) {
            row[version] = c.versionField();
        }
    }
}
