package dev.kbackfill.core.verify;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.KeyIdentity;

/**
 * How a sink reads back what its target holds for the keys of a verified range ({@link
 * dev.kbackfill.core.sink.Sink#verifier()}): read-only, without locks, without touching the job's state.
 */
public interface TargetLookup extends AutoCloseable {

    /**
     * What the target holds for each of these keys; a key it has neither a row nor a recorded delete for is left out.
     *
     * @param expected the range's final change of each key (distinct keys), keys decoded; values may not be
     *                 (held raw, to keep memory small): ask {@code values}
     * @param topic    the range's topic, the versions' topic
     * @param values   the decoded values of one of {@code expected} (null for a delete, or for a value that cannot be
     *                 decoded, which is not judged): call it only for keys the target holds a live row for
     */
    Map<KeyIdentity, TargetRow> lookup(List<Change> expected, String topic,
                                       java.util.function.Function<Change, Map<String, Object>> values);

    /**
     * Why the target would refuse this decoded change, as its sink refuses it when a run writes it (a value its
     * column cannot hold, a key longer than its column), or empty where it takes it. A run keeps such a record aside
     * and writes the key's newest earlier record the target takes: verify judges the key the same way
     * ({@link RefusedRecords}). By default, a target takes every change.
     */
    default java.util.Optional<String> refusal(Change decoded) {
        return java.util.Optional.empty();
    }

    /** The key fields of {@code expected}, in first-seen order (a record key's fields may vary record by record). */
    static List<String> keyFields(List<Change> expected) {
        java.util.LinkedHashSet<String> fields = new java.util.LinkedHashSet<>();
        expected.forEach(c -> fields.addAll(c.key().keySet()));
        return List.copyOf(fields);
    }

    /**
     * A target better read in one pass than key by key (a Delta table, whose files hold keys in no order), for a
     * range whose keys outgrew memory: the range's keys are bucketed on disk by the target's own join key, the
     * target's rows that may hold one of them are streamed once into the same buckets, and each bucket is judged
     * from its rows. Empty (the default): looked up by key, a bucket at a time.
     *
     * @param keyFields the range's key fields
     */
    default java.util.Optional<Scan> scan(List<String> keyFields) {
        return java.util.Optional.empty();
    }

    /** A target read in one pass ({@link #scan}). */
    interface Scan {
        /**
         * The target's identity of a change's key: equal exactly where the target holds the two keys in one row;
         * null where the target cannot hold the key (it has no row for it).
         */
        String joinKey(Change c);

        /** Streams, once, every row (live or deleted) whose join key {@code wanted} may hold: its join key and the row. */
        void rows(java.util.function.Predicate<String> wanted, java.util.function.BiConsumer<String, byte[]> out);

        /**
         * What the target holds for these keys, from the rows streamed for them ({@code rows} by join key), as
         * {@link #lookup} answers.
         */
        Map<KeyIdentity, TargetRow> judge(List<Change> expected, Map<String, List<byte[]>> rows, String topic,
                                          java.util.function.Function<Change, Map<String, Object>> values);
    }

    /**
     * Whether the target has a column {@code column} (as the target matches names), asked before a range is read so
     * that a table without the key's column is refused at once; true where the target cannot tell (a topic).
     */
    default boolean hasColumn(String column) {
        return true;
    }

    /** Rows (or records) read from the target so far: what verification moved. */
    long rowsRead();

    /** Keys asked for per {@link #lookup} call that pay off (one statement, one probe of the table's files). */
    default int keysPerLookup() {
        return 5_000;
    }

    @Override
    default void close() {
    }
}
