package dev.kbackfill.core.run;

/**
 * A run stopped before the end of its plan. The message says why and where each unfinished partition stands
 * (its committed next offset), which is where a rerun resumes.
 */
public final class RunFailure extends RuntimeException {

    private final transient RunSummary summary;

    public RunFailure(String message, Throwable cause) {
        this(message, cause, null);
    }

    /** @param summary what the run committed before it stopped, or null */
    public RunFailure(String message, Throwable cause, RunSummary summary) {
        super(message, cause);
        this.summary = summary;
    }

    /** What the run committed before it stopped, where known (else null). */
    public RunSummary summary() {
        return summary;
    }
}
