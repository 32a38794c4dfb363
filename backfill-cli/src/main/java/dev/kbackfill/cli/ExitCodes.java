package dev.kbackfill.cli;

/** The exit codes of every kbackfill command (DESIGN.md section 7). */
public final class ExitCodes {
    /** Done. */
    public static final int OK = 0;
    /** A runtime failure: the message names where it stopped. */
    public static final int FAILURE = 1;
    /** Bad input: one line names the bad value and the accepted forms; nothing was written. */
    public static final int BAD_INPUT = 2;
    /** Job conflict: a different plan under the same job name, or the job is already running. */
    public static final int JOB_CONFLICT = 3;
    /** {@code verify}: the target does not hold the range's final state (a key missing, extra, stale or different). */
    public static final int DISAGREES = 4;

    private ExitCodes() {
    }
}
