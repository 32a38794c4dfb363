package dev.kbackfill.core.run;

/**
 * Told about a run's progress: how far its reader has got as records arrive ({@link #onRead}), and what is committed
 * after every batch written ({@link #onProgress}); the command line draws its progress display from both. The two
 * may be called from different threads.
 */
public interface RunListener {

    /**
     * @param done    offsets of the plan behind the run now (read and committed, or skipped)
     * @param total   offsets of the plan this run set out to read
     * @param records records read so far
     * @param bytes   key and value bytes read so far
     */
    void onProgress(long done, long total, long records, long bytes);

    /**
     * How far the reader has got, ahead of what is committed: called as records arrive, before they are written.
     *
     * @param read    offsets of the plan the reader is past (records read, or offsets without a record: transaction
     *                markers, compacted gaps)
     * @param total   offsets of the plan this run set out to read
     * @param records records read so far
     * @param bytes   key and value bytes read so far
     */
    default void onRead(long read, long total, long records, long bytes) {
    }

    /** Something a person should know about how the run proceeds (a note, not a failure). */
    default void onNote(String note) {
    }

    RunListener NONE = (done, total, records, bytes) -> { };
}
