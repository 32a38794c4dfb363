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

    /**
     * How many changes of batches the writer can hold uncommitted, staged in its destination's open transaction, so
     * that the destination reduces the repeats of a key across batches (a window larger than the heap holds); 0, the
     * default, commits every batch. The run marks the batch that closes a window {@link WriteBatch#commits}, and every
     * batch at its end, a limit, a stop or a pause in the records.
     */
    default long stagingRows() {
        return 0;
    }

    /**
     * Applies one batch and stores its progress, atomically: committed, or with {@link WriteBatch#commits} false
     * possibly staged, to be committed (or rolled back) with the next batch that commits.
     */
    WriteResult write(WriteBatch batch);
}
