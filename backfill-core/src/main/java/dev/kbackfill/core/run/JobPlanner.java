package dev.kbackfill.core.run;

import java.util.Optional;
import java.util.function.Supplier;

import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.JobIdentity;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.Plan;

/**
 * Decides between starting, resuming, starting the next run of, or skipping a job, from the request and the
 * state stored in the sink:
 * <ul>
 *   <li>nothing stored: start with a fresh plan;</li>
 *   <li>stored for a different request: a {@link JobConflictException} naming {@code --job} and {@code reset};</li>
 *   <li>stored and incomplete: resume its frozen plan (refused if the topic was deleted and recreated);</li>
 *   <li>stored, complete, request fixed: nothing to do;</li>
 *   <li>stored, complete, request moving: the next run with a fresh plan.</li>
 * </ul>
 */
public final class JobPlanner {

    private JobPlanner() {
    }

    /**
     * @param job          the job name
     * @param request      what this run asks for
     * @param stored       what the sink has for the job
     * @param currentTopic the topic id now (to refuse resuming a plan of a recreated topic)
     * @param freshPlan    resolves the request; called only when a new plan is needed
     */
    public static JobDecision decide(String job, BackfillRequest request, Optional<JobState> stored,
                                     String currentTopicId, Supplier<Plan> freshPlan) {
        String fingerprint = JobIdentity.fingerprint(request);
        if (stored.isEmpty()) {
            return new JobDecision.Start(JobState.begin(job, fingerprint, 1, freshPlan.get()));
        }
        JobState s = stored.get();
        if (!s.fingerprint().equals(fingerprint)) {
            throw new JobConflictException("job '" + job + "' was created for " + JobIdentity.describe(s.plan().request())
                    + ", not " + JobIdentity.describe(request) + "; choose another name with --job, or clear it with "
                    + "'kbackfill reset --job " + job + " --sink ... --yes'");
        }
        if (!s.complete()) {
            if (!s.plan().topicId().equals(currentTopicId)) {
                throw new JobConflictException("job '" + job + "' was planned against topic " + s.plan().topic()
                        + " with id " + s.plan().topicId() + ", but the topic now has id " + currentTopicId
                        + " (deleted and recreated): its stored plan cannot be resumed; clear it with "
                        + "'kbackfill reset --job " + job + " --sink ... --yes'");
            }
            return new JobDecision.Resume(s);
        }
        if (request.moving()) {
            return new JobDecision.NextRun(JobState.begin(job, fingerprint, s.run() + 1, freshPlan.get()), s);
        }
        return new JobDecision.AlreadyDone(s);
    }
}
