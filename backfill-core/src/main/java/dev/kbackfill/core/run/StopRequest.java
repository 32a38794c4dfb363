package dev.kbackfill.core.run;

/**
 * A request that this process stop its runs at a safe point: the command line makes one on SIGINT or SIGTERM. A run
 * that sees it ends like one at its limit ({@link RunLimits}): the batch being read is written with its progress,
 * nothing further is read, and the run returns its summary; a rerun resumes there. Process-wide, as a signal is.
 */
public final class StopRequest {

    private static volatile String reason;

    private StopRequest() {
    }

    /** Asks every run of this process to stop at its next batch boundary; {@code why} names the cause (SIGTERM). */
    public static void request(String why) {
        reason = why;
    }

    /** Why a stop was requested, or null. */
    public static String reason() {
        return reason;
    }

    public static boolean requested() {
        return reason != null;
    }

    /** Forgets a request (for a process that runs again after a stop, and for tests). */
    public static void clear() {
        reason = null;
    }
}
