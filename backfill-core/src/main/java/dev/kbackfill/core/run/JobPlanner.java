package dev.kbackfill.core.run;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.JobIdentity;
import dev.kbackfill.core.sink.JobSpec;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.Plan;

/**
 * Decides between starting, resuming, starting the next run of, or skipping a job, from the request, the job's
 * spec and the state stored in the sink:
 * <ul>
 *   <li>nothing stored: start with a fresh plan;</li>
 *   <li>stored for another request or spec (destination, formats, key fields, modes, strict time): a
 *       {@link JobConflictException} naming what differs, {@code --job} and {@code reset};</li>
 *   <li>stored and incomplete: resume its frozen plan;</li>
 *   <li>stored, complete, request fixed: nothing to do;</li>
 *   <li>stored, complete, request moving: the next run with a fresh plan.</li>
 * </ul>
 * Whether a stored plan still fits the live topic is {@link dev.kbackfill.resolver.PlanCheck}'s business.
 */
public final class JobPlanner {

    private JobPlanner() {
    }

    /**
     * @param job       the job name
     * @param request   what this run asks for
     * @param spec      what shapes this run's output
     * @param stored    what the sink has for the job
     * @param freshPlan resolves the request; called only when a new plan is needed
     */
    /**
     * A fresh plan for the job: its request resolved, a {@code --from continue:FIRST} request from where the stored
     * (previous, complete) run ended ({@link dev.kbackfill.resolver.RangeResolver#resolveContinuing}), or from FIRST
     * when nothing is stored.
     */
    public static Plan freshPlan(dev.kbackfill.resolver.RangeResolver resolver, BackfillRequest request,
                                 Optional<JobState> stored) {
        return stored.isPresent() ? resolver.resolveContinuing(request, stored.get().plan()) : resolver.resolve(request);
    }

    /**
     * What every run of a job has covered, as one plan, where it can be told: a {@code --from continue:FIRST} job's
     * runs are contiguous (each starts where the one before ended), so they cover, per partition, from where FIRST
     * resolves now (a partition added later from its earliest offset) to where the latest run ends; resolved with data
     * loss allowed, so that what retention took since is counted as lost, not refused. Empty for a job of one run, and
     * for any other moving request (a window such as {@code now-2h}), whose earlier runs' ranges are not kept.
     */
    public static Optional<Plan> everyRun(dev.kbackfill.resolver.RangeResolver resolver, JobState state) {
        Plan latest = state.plan();
        BackfillRequest request = latest.request();
        if (state.run() < 2 || !(request.from() instanceof dev.kbackfill.resolver.Bound.Continue first)) {
            return Optional.empty();
        }
        BackfillRequest fromFirst = new BackfillRequest(request.topic(), request.fromText(), request.toText(),
                first.first(), request.to(), request.zone(), request.partitions(), request.isolationLevel(), true,
                request.readers());
        Plan firstRun = resolver.resolve(fromFirst);
        List<dev.kbackfill.resolver.PartitionRange> ranges = new ArrayList<>();
        for (dev.kbackfill.resolver.PartitionRange r : latest.partitions()) {
            long start = firstRun.partition(r.partition()).map(f -> Math.min(f.start(), r.start())).orElse(r.start());
            ranges.add(new dev.kbackfill.resolver.PartitionRange(r.partition(), start, r.end(), r.logStart(), r.logEnd(),
                    Optional.empty(), r.notes()));
        }
        return Optional.of(new Plan(request, latest.resolvedAt(), firstRun.fromTime(), latest.toTime(),
                latest.clusterId(), latest.topicId(), latest.timestampType(), ranges, latest.notes()));
    }

    /**
     * The same, for a run given a plan resolved earlier ({@code --plan FILE}, an engine's frozen plan): it is the
     * fresh plan, and an unfinished stored run with another plan is a conflict.
     *
     * @param planFile the plan given, if any
     * @param resolve  resolves the request when no plan is given and a new plan is needed
     */
    public static JobDecision decide(String job, BackfillRequest request, JobSpec spec, Optional<JobState> stored,
                                     Optional<Plan> planFile, Supplier<Plan> resolve) {
        JobDecision decision = decide(job, request, spec, stored, () -> planFile.orElseGet(resolve));
        planFile.ifPresent(p -> stored.filter(s -> !s.complete() && !s.plan().partitions().equals(p.partitions()))
                .ifPresent(s -> {
                    throw new JobConflictException("job '" + job + "' has a stored plan that differs from the plan "
                            + "file; finish it without --plan, or clear it with 'kbackfill reset --job " + job
                            + " --sink ... --yes'");
                }));
        return decision;
    }

    public static JobDecision decide(String job, BackfillRequest request, JobSpec spec, Optional<JobState> stored,
                                     Supplier<Plan> freshPlan) {
        if (stored.isEmpty()) {
            return new JobDecision.Start(JobState.begin(job, spec, 1, freshPlan.get()));
        }
        JobState s = stored.get();
        List<String> differences = new ArrayList<>(s.spec().differences(spec));
        boolean continuing = request.from() instanceof dev.kbackfill.resolver.Bound.Continue;
        if (continuing && JobIdentity.describeFrom(s.plan().request()).equals(JobIdentity.describeFrom(request))) {
            // a continue: job's later bound moves from night to night (--to 2024-01-03, then --to 2024-01-04): the
            // same job, each run from where the last ended
            differences.removeIf(d -> d.startsWith(JobSpec.REQUEST + " "));
        }
        if (!s.spec().parts().containsKey(JobSpec.REQUEST) && !s.fingerprint().equals(JobIdentity.fingerprint(request))) {
            // stored before jobs had a spec: its fingerprint is the request's
            differences.add(0, JobSpec.REQUEST + " " + JobIdentity.describe(s.plan().request()) + ", not "
                    + JobIdentity.describe(request));
        }
        if (!differences.isEmpty()) {
            boolean shape = differences.stream().anyMatch(d -> d.startsWith(JobSpec.COLUMNS + " "));
            throw new JobConflictException("job '" + job + "' was created with " + String.join("; ", differences)
                    + (continuing ? "; run it as it was created to go on from where its last run ended (another "
                    + "--job starts at continue's first bound again)"
                    : "; choose another name with --job, or clear it with 'kbackfill reset --job " + job
                    + " --sink ... --yes'") + (shape ? " (rows it wrote keep their columns: the same records replayed "
                    + "are kept out as not newer; to rewrite them, run the range it wrote under another --job with "
                    + "--on-conflict overwrite, which also replaces rows a newer record wrote since)" : ""));
        }
        if (!s.complete()) {
            List<String> run = s.spec().runDifferences(spec);
            if (!run.isEmpty()) {
                // an unfinished run's progress has its engine's shape (Spark waves, sub-jobs per partition)
                throw new JobConflictException("job '" + job + "' is in the middle of run " + s.run() + " with "
                        + String.join("; ", run) + "; finish it the way it started, or clear it with "
                        + "'kbackfill reset --job " + job + " --sink ... --yes'");
            }
            return new JobDecision.Resume(s);
        }
        if (request.moving()) {
            // a later run of the same incarnation; a job stored before incarnations gets one now
            String incarnation = s.incarnation().isEmpty() ? JobState.newIncarnation() : s.incarnation();
            return new JobDecision.NextRun(JobState.begin(job, spec, s.run() + 1, freshPlan.get(), incarnation), s);
        }
        return new JobDecision.AlreadyDone(s);
    }
}
