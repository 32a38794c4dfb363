package dev.kbackfill.core.run;

/** Told about a run's progress after every batch written; the command line draws its progress display from it. */
public interface RunListener {

    /**
     * @param done    offsets of the plan behind the run now (read and committed, or skipped)
     * @param total   offsets of the plan this run set out to read
     * @param records records read so far
     * @param bytes   key and value bytes read so far
     */
    void onProgress(long done, long total, long records, long bytes);

    /** Something a person should know about how the run proceeds (a note, not a failure). */
    default void onNote(String note) {
    }

    RunListener NONE = (done, total, records, bytes) -> { };
}
