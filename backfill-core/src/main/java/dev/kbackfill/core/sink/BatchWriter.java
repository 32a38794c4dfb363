package dev.kbackfill.core.sink;

/**
 * What a run writes its batches into ({@code BackfillRun}): a sink's writer, or verification's fold of a range, which
 * keeps each key's final change and writes nothing anywhere.
 */
public interface BatchWriter {

    /**
     * Whether {@link dev.kbackfill.core.record.Change#source()} must reach this writer (a sink that copies records
     * as they are); otherwise the run drops the raw records as soon as they are decoded.
     */
    default boolean copiesSourceRecords() {
        return false;
    }

    /**
     * Whether batches must carry decoded values; false for a sink that keeps raw records and decodes what it needs
     * later (verification's fold): the run then decodes keys only, where the key is the record key.
     */
    default boolean needsValues() {
        return true;
    }

    /** Applies one batch and stores its progress, atomically. */
    WriteResult write(WriteBatch batch);
}
