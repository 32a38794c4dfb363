package dev.kbackfill.core.record;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.kbackfill.core.version.VersionField;

/**
 * The version field of a run's tombstones, per partition: a tombstone carries no value, so it takes the field of the
 * nearest record before it in its partition, at most {@link VersionField#TOMBSTONE_REACH} offsets back, that carries
 * one; with none there, none. Records must be given in offset order per partition. Where this run has not seen such a
 * record of a partition yet, the records before it are asked for ({@link Seeds}: read back in the log), so that
 * every run gives a tombstone the same field wherever it starts.
 */
public final class FieldClock {

    /** The nearest record before an offset of a partition, within reach, that carries the field. */
    public interface Seeds {
        /** @return the record's offset and field value, if there is one in {@code [offset - reach, offset)} */
        Optional<Map.Entry<Long, Comparable<?>>> before(int partition, long offset);

        /** No records before the run: where the log starts. */
        Seeds NONE = (partition, offset) -> Optional.empty();
    }

    private final Seeds seeds;
    private final Map<Integer, Map.Entry<Long, Comparable<?>>> last = new HashMap<>();
    private final Set<Integer> seeded = new HashSet<>();

    public FieldClock(Seeds seeds) {
        this.seeds = seeds;
    }

    /** A record of {@code partition} at {@code offset} that carries {@code field}. */
    public void saw(int partition, long offset, Comparable<?> field) {
        if (field != null) {
            last.put(partition, Map.entry(offset, field));
            seeded.add(partition); // nothing before it matters any more
        }
    }

    /** The change as the version rule sees it: a tombstone with the field it takes; another as it is, noted. */
    public Change stamp(Change c) {
        if (!c.isTombstone()) {
            saw(c.partition(), c.offset(), c.versionField());
            return c;
        }
        return c.withVersionField(forTombstone(c.partition(), c.offset()));
    }

    /**
     * A record the run filters out (outside the time window) in offset order: the field belongs to the log, so it
     * moves the clock as any record does; one that cannot be decoded carries no field.
     */
    public void passed(SourceRecord r, RecordDecoder decoder) {
        if (r.value() == null) {
            return;
        }
        try {
            stamp(decoder.decode(r));
        } catch (DecodeException e) {
            // a poison record carries no field
        }
    }

    /** The field a tombstone of {@code partition} at {@code offset} takes, or null. */
    public Comparable<?> forTombstone(int partition, long offset) {
        Map.Entry<Long, Comparable<?>> seen = last.get(partition);
        if (seen == null && seeded.add(partition)) {
            seen = seeds.before(partition, offset).orElse(null);
            if (seen != null) {
                last.put(partition, seen);
            }
        }
        return seen != null && seen.getKey() >= offset - VersionField.TOMBSTONE_REACH ? seen.getValue() : null;
    }
}
