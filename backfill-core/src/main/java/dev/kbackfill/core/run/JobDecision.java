package dev.kbackfill.core.run;

import java.util.Optional;

import dev.kbackfill.core.sink.JobState;

/** What a run of a job does, decided from the request and what the sink stored (DESIGN.md section 6). */
public sealed interface JobDecision {

    /** No stored state: a first run with a freshly resolved plan. */
    record Start(JobState state) implements JobDecision {
    }

    /** The stored run is incomplete: continue it from its stored progress, with its frozen plan. */
    record Resume(JobState state) implements JobDecision {
    }

    /** The stored run is complete and the request moving ({@code latest}, relative times): a new run, fresh plan. */
    record NextRun(JobState state, JobState previous) implements JobDecision {
    }

    /** The stored run is complete and the request fixed: nothing to do. */
    record AlreadyDone(JobState state) implements JobDecision {
    }

    /** The state the run works from, if any. */
    default Optional<JobState> toRun() {
        if (this instanceof Start s) {
            return Optional.of(s.state());
        }
        if (this instanceof Resume r) {
            return Optional.of(r.state());
        }
        if (this instanceof NextRun n) {
            return Optional.of(n.state());
        }
        return Optional.empty();
    }
}
