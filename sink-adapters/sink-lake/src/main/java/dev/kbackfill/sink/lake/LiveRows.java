package dev.kbackfill.sink.lake;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.verify.TargetRow;
import dev.kbackfill.core.verify.Values;
import dev.kbackfill.core.version.Version;

/**
 * How verification judges a live row of a lake table, whatever its format: every column the job writes must hold
 * the physical form of the value the key's last record gives it (a field it lacks: NULL, {@link Values#differing}'s
 * rule), converted exactly as the sink writes it; the row's values are shown as people read them.
 */
public final class LiveRows {

    /** A top-level column of the table as verification reads it. */
    public interface Column {
        String name();

        /** A record's value as the column holds it. */
        Object physical(Object value) throws ValueMismatch;

        /** A stored value as people read it (timestamps as instants, dates as dates). */
        Object readable(Object stored);
    }

    private LiveRows() {
    }

    /**
     * The live row {@code row} of a key whose last record gives {@code want} (null: not judged, a value that did not
     * decode), stored at {@code version} where {@code expected} is the record's.
     */
    public static TargetRow judge(List<? extends Column> columns, MetadataOrdinals ord, int[] keyOrdinals,
                                  SinkSettings settings, Map<String, Object> want, Object[] row, Version version,
                                  Version expected) {
        Map<String, Object> shown = new LinkedHashMap<>();
        List<String> differing = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            if (ord.isMetadata(i) || contains(keyOrdinals, i)) {
                continue;
            }
            Column c = columns.get(i);
            shown.put(c.name(), c.readable(row[i]));
            if (want == null || !settings.writesValueColumn(c.name())) {
                continue;
            }
            try {
                if (!LakeValues.samePhysical(c.physical(Values.field(want, c.name())), row[i])) {
                    differing.add(c.name());
                }
            } catch (ValueMismatch e) {
                differing.add(c.name());
            }
        }
        for (int time : new int[] {ord.timestamp(), ord.logTime()}) {
            // a run writes whole milliseconds: a time moved by any fraction of one is not what it wrote
            if (time >= 0 && row[time] instanceof Number micros && micros.longValue() % 1000 != 0) {
                differing.add(columns.get(time).name());
            }
        }
        return TargetRow.live(version, expected, shown, differing);
    }

    private static boolean contains(int[] ordinals, int i) {
        for (int o : ordinals) {
            if (o == i) {
                return true;
            }
        }
        return false;
    }

    /** Microseconds since the epoch as an instant. */
    public static java.time.Instant instantOfMicros(long micros) {
        return java.time.Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000), Math.floorMod(micros, 1_000_000) * 1_000L);
    }
}
