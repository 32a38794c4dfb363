package dev.kbackfill.core.verify;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.version.Version;

/**
 * What a target holds for one key, as a sink reads it back for verification.
 *
 * @param live      whether the key holds a value (false: a soft-deleted row, or only a delete the sink's tombstone
 *                  ledger recorded)
 * @param version   the version of the record that wrote the row (for a deleted key: of its delete), or null where the
 *                  target keeps none (a table no backfill wrote, one without metadata columns)
 * @param deletedAt the version of a delete the tombstone ledger holds for the key, or null
 * @param values    the row's values by field name, in the sink's canonical form, for people (samples); empty where
 *                  the target keeps none (a topic: its record's bytes), and may be left empty for a row that holds
 *                  the expected version and values (a matching row shows none)
 * @param differing the value fields whose stored value is not the expected one, by the sink's column types (empty
 *                  for a deleted key)
 * @param duplicated whether the target holds more than one live row for the key (a table without a primary key, a
 *                  lake table, written by another hand): never the range's final state, whatever each row holds
 */
public record TargetRow(boolean live, Version version, Version deletedAt, Map<String, Object> values,
                        List<String> differing, boolean duplicated) {

    /**
     * The field a target that keeps records whole (a topic) compares: the record's value, its bytes; shown to people
     * as text where they are text ({@link dev.kbackfill.core.record.Readable}).
     */
    public static final String RECORD_VALUE = "record value";

    public TargetRow {
        values = values == null ? Map.of() : java.util.Collections.unmodifiableMap(values);
        differing = List.copyOf(differing);
    }

    /** A row held once. */
    public TargetRow(boolean live, Version version, Version deletedAt, Map<String, Object> values,
                     List<String> differing) {
        this(live, version, deletedAt, values, differing, false);
    }

    /** A row holding a value. */
    public static TargetRow live(Version version, Map<String, Object> values, List<String> differing) {
        return new TargetRow(true, version, null, values, differing);
    }

    /**
     * A row holding a value, judged against the range's change of version {@code expected}: its values are kept for
     * people only where it does not match (a matching row shows none, and holds no memory).
     */
    public static TargetRow live(Version version, Version expected, Map<String, Object> values, List<String> differing) {
        boolean matching = differing.isEmpty() && (version == null || Version.compare(version, expected) == 0
                && version.timestamp() == expected.timestamp());
        return new TargetRow(true, version, null, matching ? Map.of() : values, differing);
    }

    /** A key deleted at {@code version}: a soft-deleted row, or an entry of the tombstone ledger. */
    public static TargetRow deleted(Version version) {
        return new TargetRow(false, null, version, Map.of(), List.of());
    }

    /**
     * What two lookups of one key (the table, its ledger; two files of a lake table) say together: a live row, else
     * the newer delete; two live rows are a key held twice ({@link #duplicated}).
     */
    public static TargetRow merge(TargetRow a, TargetRow b) {
        if (a == null || b == null) {
            return a == null ? b : a;
        }
        if (a.live() && b.live()) {
            Map<String, Object> values = new java.util.LinkedHashMap<>(a.values().isEmpty() ? b.values() : a.values());
            List<String> differing = new java.util.ArrayList<>(a.differing());
            b.differing().stream().filter(d -> !differing.contains(d)).forEach(differing::add);
            return new TargetRow(true, Version.newer(a.version(), b.version()), Version.newer(a.deletedAt(),
                    b.deletedAt()), values, differing, true);
        }
        if (a.live() != b.live()) {
            TargetRow live = a.live() ? a : b;
            TargetRow dead = a.live() ? b : a;
            return new TargetRow(true, live.version(), Version.newer(live.deletedAt(), dead.deletedAt()), live.values(),
                    live.differing());
        }
        return a.live() ? a : deleted(Version.newer(a.deletedAt(), b.deletedAt()));
    }
}
