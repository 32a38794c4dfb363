package dev.kbackfill.core.run;

/**
 * A run stopped before the end of its plan. The message says why and where each unfinished partition stands
 * (its committed next offset), which is where a rerun resumes.
 */
public final class RunFailure extends RuntimeException {
    public RunFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
