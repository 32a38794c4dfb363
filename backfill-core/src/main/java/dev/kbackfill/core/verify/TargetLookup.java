package dev.kbackfill.core.verify;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.record.RowShape;

/**
 * How a sink reads back what its target holds for the keys of a verified range ({@link
 * dev.kbackfill.core.sink.Sink#verifier()}): read-only, without locks, without touching the job's state.
 */
public interface TargetLookup extends AutoCloseable {

    /**
     * What the target holds for each of these keys; a key it has neither a row nor a recorded delete for is left out.
     *
     * @param expected the range's final change of each key (distinct keys), values decoded
     * @param shape    their columns ({@link RowShape#of})
     * @param topic    the range's topic, the versions' topic
     */
    Map<KeyIdentity, TargetRow> lookup(List<Change> expected, RowShape shape, String topic);

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
