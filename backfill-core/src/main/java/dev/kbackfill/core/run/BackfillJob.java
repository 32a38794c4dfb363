package dev.kbackfill.core.run;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Supplier;

import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.JobIdentity;
import dev.kbackfill.core.sink.JobSpec;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.OffsetSource;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.PlanCheck;
import dev.kbackfill.resolver.RangeResolver;
import dev.kbackfill.resolver.TopicInfo;

/**
 * The job protocol, the one way a backfill runs, from the command line or from other JVM code: <b>open</b> the
 * sink, <b>lock</b> the job, <b>load</b> its stored state, <b>decide</b> ({@link JobPlanner}: start, resume, next
 * run, nothing to do, or a conflict), <b>check</b> a stored plan against the live topic ({@link PlanCheck}),
 * <b>begin</b> a new run (its plan stored in the sink), <b>run</b> it ({@link BackfillRun}) and <b>complete</b>.
 * A crash at any point leaves a state from which the same call resumes.
 *
 * <pre>{@code
 * try (Sink sink = SinkFactory.forSettings(settings); KafkaOffsetSource source = KafkaOffsetSource.create(kafka)) {
 *     BackfillJob.Outcome outcome = new BackfillJob(sink, settings, BackfillJob.Events.NONE, RunListener.NONE)
 *             .run(() -> BackfillJob.Cluster.of(source, request.topic()));
 * }
 * }</pre>
 */
public final class BackfillJob {

    /**
     * What to run.
     *
     * @param name         the job name; empty derives it from the request and the sink ({@link JobIdentity#defaultName})
     * @param request      what to backfill (a plan file's request when {@code planFile} is given)
     * @param planFile     a plan resolved earlier ({@code kbackfill plan --out}), run as it is
     * @param spec         builds the job's spec from the sink's destination
     * @param kafkaConfig  the reader's client settings
     * @param decoder      how records become rows
     * @param rejects      where records that cannot be decoded go
     * @param tombstones   what a tombstone does ({@code ignore} filters them as they are read)
     * @param options      how to read and batch
     * @param batchRows    rows per batch; empty takes the sink's default ({@link Sink#defaultBatchRows()})
     * @param retryFor     how long transient failures ({@link Transient}) are retried, with backoff, before the
     *                     call fails; zero fails at the first
     */
    public record Settings(Optional<String> name, BackfillRequest request, Optional<Plan> planFile,
                           java.util.function.Function<String, JobSpec> spec, Map<String, Object> kafkaConfig,
                           RecordDecoder decoder, Rejects rejects, TombstoneMode tombstones, RunOptions options,
                           OptionalInt batchRows, Duration retryFor) {
        public Settings {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(request, "request");
            Objects.requireNonNull(planFile, "planFile");
            Objects.requireNonNull(spec, "spec");
            kafkaConfig = Map.copyOf(kafkaConfig);
        }

        /**
         * Settings with the command line's defaults: a job name derived from the request and the sink, string keys
         * and JSON values, newer-wins and hard deletes (the sink's settings must say the same), poison records
         * failing the run, the sink's batch size, transient failures retried for five minutes.
         */
        public static Builder builder(BackfillRequest request, Map<String, Object> kafkaConfig) {
            return new Builder(request, kafkaConfig);
        }
    }

    /** Builds {@link Settings}; every setting has the command line's default. */
    public static final class Builder {
        private final BackfillRequest request;
        private final Map<String, Object> kafkaConfig;
        private Optional<String> name = Optional.empty();
        private Optional<Plan> planFile = Optional.empty();
        private RecordDecoder decoder = new RecordDecoder(dev.kbackfill.core.record.Format.STRING,
                dev.kbackfill.core.record.Format.JSON, "kafka_key", "value", List.of());
        private List<String> keyFields = List.of();
        private dev.kbackfill.core.sink.ConflictMode conflict = dev.kbackfill.core.sink.ConflictMode.NEWER_WINS;
        private TombstoneMode tombstones = TombstoneMode.DELETE;
        private Rejects rejects = Rejects.fail();
        private RunOptions options = RunOptions.DEFAULTS;
        private OptionalInt batchRows = OptionalInt.empty();
        private Duration retryFor = Duration.ofMinutes(5);
        private String engine = JobSpec.LOCAL;
        private String definition;

        private Builder(BackfillRequest request, Map<String, Object> kafkaConfig) {
            this.request = request;
            this.kafkaConfig = kafkaConfig;
        }

        public Builder job(String job) {
            this.name = Optional.of(job);
            return this;
        }

        /** Runs a plan resolved earlier, as it is (its request replaces the builder's). */
        public Builder plan(Plan plan) {
            this.planFile = Optional.of(plan);
            return this;
        }

        /** @param keyFields the value fields keying rows, as the decoder was told (empty: the record key) */
        public Builder decoder(RecordDecoder decoder, List<String> keyFields) {
            this.decoder = decoder;
            this.keyFields = List.copyOf(keyFields);
            return this;
        }

        /** The modes the sink was given in its {@link dev.kbackfill.core.sink.SinkSettings}. */
        public Builder modes(dev.kbackfill.core.sink.ConflictMode conflict, TombstoneMode tombstones) {
            this.conflict = conflict;
            this.tombstones = tombstones;
            return this;
        }

        public Builder rejects(Rejects rejects) {
            this.rejects = rejects;
            return this;
        }

        public Builder options(RunOptions options) {
            this.options = options;
            return this;
        }

        public Builder batchRows(int rows) {
            this.batchRows = OptionalInt.of(rows);
            return this;
        }

        public Builder retryFor(Duration retryFor) {
            this.retryFor = retryFor;
            return this;
        }

        /** How the run executes, as the job's spec records it ({@link JobSpec#ENGINE}); {@code local} by default. */
        public Builder engine(String engine) {
            this.engine = engine;
            return this;
        }

        /**
         * How the job's runs are set up, stored with its spec ({@link JobSpec#DEFINITION}): a
         * {@link JobDefinition#toStored()} document, for commands that later act on the job as its runs did.
         */
        public Builder definition(String definition) {
            this.definition = definition;
            return this;
        }

        public Settings build() {
            BackfillRequest r = planFile.map(Plan::request).orElse(request);
            RecordDecoder d = decoder;
            List<String> fields = keyFields;
            dev.kbackfill.core.sink.ConflictMode c = conflict;
            TombstoneMode t = tombstones;
            boolean strict = options.strictTime();
            String e = engine;
            String stored = definition;
            return new Settings(name, r, planFile, destination -> {
                JobSpec spec = JobSpec.of(r, destination, d.formatSpec(true), d.formatSpec(false), fields, c, t,
                        strict, e);
                JobSpec s = d.versionField().map(f -> spec.with(JobSpec.VERSION_FIELD, f.label())).orElse(spec);
                if (d.filter().isPresent()) {
                    s = s.with(JobSpec.WHERE, d.filter().get().expression());
                }
                if (!d.mapping().isNone()) {
                    s = s.with(JobSpec.COLUMNS, d.mapping().spec());
                }
                return stored == null ? s : s.with(JobSpec.DEFINITION, stored);
            }, kafkaConfig, decoder, rejects, tombstones,
                    options.withAllowDataLoss(r.allowDataLoss()), batchRows, retryFor);
        }
    }

    /** The cluster side of a run: the topic as described now, and offsets to check a stored plan against. */
    public interface Cluster {
        OffsetSource source();

        TopicInfo topic();

        static Cluster of(OffsetSource source, String topic) {
            TopicInfo described = source.describe(topic);
            return new Cluster() {
                @Override
                public OffsetSource source() {
                    return source;
                }

                @Override
                public TopicInfo topic() {
                    return described;
                }
            };
        }
    }

    /** Told what the protocol decided, before the run reads anything; the command line prints from it. */
    public interface Events {
        /** The sink is open; its warnings, for people. */
        default void opened(String job, List<String> warnings) {
        }

        /** The sink is open; its notes (not warnings), for people. */
        default void noted(String job, List<String> notes) {
        }

        /** A run starts or resumes with {@code state}. */
        default void starting(JobDecision decision, JobState state) {
        }

        /** A transient failure: the protocol runs again from the sink's progress after {@code delay}. */
        default void retrying(int attempt, Duration delay, RuntimeException cause) {
        }

        Events NONE = new Events() {
        };
    }

    /** How a call ended. */
    public sealed interface Outcome {
        String job();

        /** The stored run is complete and the request fixed: nothing was read or written. */
        record NothingToDo(String job, JobState state) implements Outcome {
        }

        /** A run went to the end of its plan. */
        record Completed(String job, JobDecision decision, RunSummary summary) implements Outcome {
        }
    }

    /**
     * Executes the run the protocol decided on, from {@code state}'s progress to the end of its plan, writing through
     * {@code sink} (open, and the job locked): {@link #LOCAL} in this process, or an engine's (Spark's).
     */
    public interface Runner {
        RunSummary run(Settings settings, Sink sink, JobState state, RunOptions options, RunListener listener);

        /**
         * The run, given the offset source the job already holds (its cluster side): a runner that looks offsets up
         * itself (the log time below each start) takes it instead of opening a client of its own.
         */
        default RunSummary run(Settings settings, Sink sink, JobState state, RunOptions options, RunListener listener,
                               dev.kbackfill.resolver.OffsetSource offsets) {
            return run(settings, sink, state, options, listener);
        }

        /** {@link BackfillRun} in this process, reading Kafka itself. */
        Runner LOCAL = reading(dev.kbackfill.core.read.RecordSource.Factory.KAFKA);

        /** {@link BackfillRun} in this process, reading the records {@code source} hands over. */
        static Runner reading(dev.kbackfill.core.read.RecordSource.Factory source) {
            return new Runner() {
                @Override
                public RunSummary run(Settings s, Sink sink, JobState state, RunOptions options, RunListener listener) {
                    return new BackfillRun(s.kafkaConfig(), s.decoder(), sink, s.tombstones(), options, listener,
                            s.rejects(), source).execute(state);
                }

                @Override
                public RunSummary run(Settings s, Sink sink, JobState state, RunOptions options, RunListener listener,
                                      dev.kbackfill.resolver.OffsetSource offsets) {
                    return new BackfillRun(s.kafkaConfig(), s.decoder(), sink, s.tombstones(), options, listener,
                            s.rejects(), source).lookingUpIn(offsets).execute(state);
                }
            };
        }
    }

    private final Sink sink;
    private final Settings settings;
    private final Events events;
    private final RunListener listener;
    private final Runner runner;

    public BackfillJob(Sink sink, Settings settings, Events events, RunListener listener) {
        this(sink, settings, events, listener, Runner.LOCAL);
    }

    /** Whether an attempt of this job has reached both the cluster and the sink (later failures are retried). */
    private boolean reached;

    /** @param runner executes the decided run (an engine's; {@link Runner#LOCAL} otherwise) */
    public BackfillJob(Sink sink, Settings settings, Events events, RunListener listener, Runner runner) {
        this.sink = sink;
        this.settings = settings;
        this.events = events;
        this.listener = listener;
        this.runner = runner;
    }

    /**
     * Runs the protocol. The sink is opened here; the caller closes it.
     *
     * @param cluster the cluster side, asked for once the job is locked (it may be started in the background)
     * @throws JobConflictException           another run holds the job, or the job was created for another spec
     * @throws dev.kbackfill.resolver.RequestException a stored plan that does not fit the live topic
     * @throws RunFailure                     the run stopped; the message names where each partition stands
     */
    public Outcome run(Supplier<Cluster> cluster) {
        long started = System.nanoTime();
        long deadline = started + settings.retryFor().toNanos();
        RunSummary before = null;
        for (int attempt = 1; ; attempt++) {
            try {
                // --max-records and --max-duration count what earlier attempts of this run read, and since when
                RunLimits limits = before == null ? settings.options().limits()
                        : settings.options().limits().remaining(before.read(), System.nanoTime() - started);
                Outcome outcome = once(cluster, limits);
                if (outcome instanceof Outcome.Completed done && before != null) {
                    // what earlier attempts committed counts too
                    return new Outcome.Completed(done.job(), done.decision(), RunSummary.merge(before, done.summary()));
                }
                return outcome;
            } catch (RuntimeException e) {
                long left = deadline - System.nanoTime();
                if (!Transient.is(e) || left <= 0 || StopRequest.requested()) {
                    throw e;
                }
                if (!reached) {
                    // the first contact with the cluster or the sink failed: a wrong address, a service not up;
                    // retrying for minutes would only hide it (a cron job runs again anyway)
                    throw new RunFailure(e.getMessage() + " (on first contact: not retried; --retry-for retries "
                            + "failures once a run has reached the cluster and the sink)", e,
                            e instanceof RunFailure f ? f.summary() : null);
                }
                if (e instanceof RunFailure f && f.summary() != null) {
                    before = before == null ? f.summary() : RunSummary.merge(before, f.summary());
                }
                Duration delay = Duration.ofMillis(Math.min(Math.min(30_000L, 1000L << Math.min(attempt - 1, 5)),
                        Math.max(1, left / 1_000_000)));
                events.retrying(attempt, delay, e);
                sink.close(); // connections of a failed attempt: the next opens its own
                long until = System.nanoTime() + delay.toNanos();
                while (System.nanoTime() < until) {
                    if (StopRequest.requested()) {
                        throw e; // a signal ends the wait at once: nothing is in flight
                    }
                    try {
                        Thread.sleep(Math.min(100, Math.max(1, (until - System.nanoTime()) / 1_000_000)));
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        throw e;
                    }
                }
            }
        }
    }

    /** One pass of the protocol: open, lock, then the rest; a transient failure anywhere is retried whole. */
    private Outcome once(Supplier<Cluster> cluster, RunLimits limits) {
        String job = open(settings.name());
        AutoCloseable lock = sink.jobStore().lock(job);
        try {
            return locked(job, cluster.get(), limits);
        } finally {
            try {
                lock.close();
            } catch (Exception e) {
                // the run's own outcome matters; a lock whose connection died is released by the database
            }
        }
    }

    /** Opens the sink and tells what it found; returns the job's name ({@code name}, or the one derived). */
    private String open(Optional<String> name) {
        sink.open();
        String job = name.orElseGet(() -> JobIdentity.defaultName(settings.request(), sink.target()));
        events.opened(job, sink.warnings());
        events.noted(job, sink.notes());
        return job;
    }

    private Outcome locked(String job, Cluster cluster, RunLimits limits) {
        JobDecision decision = decided(job, cluster);
        reached = true; // the cluster answered, the sink holds the job's lock: failures from here on are retried
        if (decision instanceof JobDecision.AlreadyDone done) {
            return new Outcome.NothingToDo(job, done.state());
        }
        JobState state = decision.toRun().orElseThrow();
        if (!(decision instanceof JobDecision.Resume)) {
            sink.jobStore().begin(state);
        }
        events.starting(decision, state);
        List<String> opened = sink.warnings();
        RunSummary summary;
        try {
            summary = runner.run(settings, sink, state, options(limits), listener, cluster.source());
        } catch (RuntimeException e) {
            if (!(decision instanceof JobDecision.Resume) && !Transient.is(e)) {
                forgetUnstarted(decision, state, e);
            }
            throw e;
        }
        // what the sink found while writing (a table never created), beside what it said when it opened
        List<String> found = sink.warnings().stream().filter(w -> !opened.contains(w)).toList();
        return new Outcome.Completed(job, decision, summary.withWarnings(found));
    }

    /**
     * A new run that failed before its first batch was committed leaves nothing stored: a job begun with a typo in
     * its key fields or the wrong format is forgotten again (a next run's begin gives way to the run before it), so
     * that the corrected command just runs instead of meeting a job bound to the typo. Best effort under the lock;
     * a sink that cannot answer now keeps what it has, and the run's own failure is what is reported.
     */
    private void forgetUnstarted(JobDecision decision, JobState begun, RuntimeException failure) {
        if (failure instanceof RunFailure f && f.summary() != null && f.summary().batches() > 0) {
            return; // batches were committed (an engine's sub-jobs hold their progress): the job holds real progress
        }
        try {
            Optional<JobState> now = sink.jobStore().load(begun.job());
            if (now.isEmpty() || now.get().run() != begun.run() || !now.get().nextOffsets().equals(begun.nextOffsets())) {
                return; // a batch was committed: the job holds real progress
            }
            if (decision instanceof JobDecision.NextRun next) {
                sink.jobStore().begin(next.previous());
            } else {
                sink.jobStore().withdraw(begun.job());
            }
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /** What a run of the job would do, decided under the lock, the plan it would run checked against the log. */
    private JobDecision decided(String job, Cluster cluster) {
        BackfillRequest request = settings.request();
        JobSpec spec = settings.spec().apply(sink.jobStore().destination());
        Optional<JobState> stored = sink.jobStore().load(job);
        spec = sameDestinationAsStored(spec, stored);
        Optional<Plan> planFile = settings.planFile();
        JobDecision decision = JobPlanner.decide(job, request, spec, stored, planFile,
                () -> JobPlanner.freshPlan(resolver(cluster, request), request, stored));
        if (decision instanceof JobDecision.AlreadyDone) {
            return decision;
        }
        JobState state = decision.toRun().orElseThrow();
        boolean fresh = !(decision instanceof JobDecision.Resume) && planFile.isEmpty();
        if (!fresh) {
            // a plan made earlier, a file's or the job's own: it must still describe this log
            PlanCheck.check(state.plan(), cluster.source(), cluster.topic(), state.nextOffsets(),
                    settings.options().allowDataLoss(),
                    dev.kbackfill.core.read.archive.ConnectorArchive.of(state.plan().request()).orElse(null));
        }
        return decision;
    }

    /** The resolver of the job's plans: the cluster's, reading below the log start from the archive it names. */
    private static RangeResolver resolver(Cluster cluster, BackfillRequest request) {
        return dev.kbackfill.core.read.archive.ConnectorArchive.resolving(
                new RangeResolver(cluster.source()).describedAs(cluster.topic()), request);
    }

    /**
     * {@code spec} with the stored job's spelling of its destination where the sink resolves both to one (a table named
     * {@code public.orders} by one run and {@code orders} by the next): the job, not a conflict.
     */
    private JobSpec sameDestinationAsStored(JobSpec spec, Optional<JobState> stored) {
        String mine = spec.parts().get(JobSpec.DESTINATION);
        String theirs = stored.map(s -> s.spec().parts().get(JobSpec.DESTINATION)).orElse(null);
        return mine != null && theirs != null && !mine.equals(theirs) && sink.jobStore().sameDestination(theirs, mine)
                ? spec.with(JobSpec.DESTINATION, theirs) : spec;
    }

    /**
     * The run's options: the batch size the sink chose where the user did not, what is left of the limits, and what a
     * row without kbackfill's version is to the run ({@code --live-writer}, asked of the open sink where automatic).
     */
    private RunOptions options(RunLimits limits) {
        RunOptions o = settings.options();
        return o.withBatchRows(settings.batchRows().orElse(sink.defaultBatchRows())).withLimits(limits)
                .withForeignRows(o.liveWriter().foreignRows(sink::holdsForeignRows));
    }

    /**
     * Decides what a run of the job would do, under the job's lock and with the plan checked against the log, and
     * does nothing more (no run is stored): for a launch that hands the run to another process to start
     * ({@code --spark-spec-out}). The sink is opened here; the caller closes it.
     */
    public JobDecision decide(Supplier<Cluster> cluster) {
        String job = open(settings.name());
        try (AutoCloseable lock = sink.jobStore().lock(job)) {
            return decided(job, cluster.get());
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs a run that a launching process began and holds the job's lock of while this one works (an engine's
     * driver under {@code kbackfill run --engine spark}): no decision and no lock here, only a check that the sink
     * holds that very run, unfinished (or, where the launch could not store it, {@code storedByLaunch} false, stores
     * it), and then the runner from its stored progress. No transient retries either:
     * the launch retries the whole. The sink is opened here; the caller closes it.
     *
     * @throws JobConflictException the sink holds another run or incarnation of the job, or none: the job changed
     *                              since the launch began the run
     */
    public Outcome.Completed runLaunched(String job, int run, String incarnation, boolean storedByLaunch) {
        open(Optional.of(job));
        AutoCloseable joined = sink.jobStore().joinLock(job);
        try {
            Optional<JobState> stored = sink.jobStore().load(job);
            JobState state;
            if (!storedByLaunch && (stored.isEmpty() || stored.get().run() != run)) {
                // the launch could not store its run: it waits for the table's first commit (a table the run
                // creates), or the table takes commits from this engine's writer only; begun here alike
                state = JobState.begin(job, settings.spec().apply(sink.jobStore().destination()), run,
                        settings.planFile().orElseThrow(() -> new IllegalStateException("a launched run has its plan")),
                        incarnation);
                sink.jobStore().begin(state);
            } else {
                state = stored.orElseThrow(() -> new JobConflictException("job " + job + " has no stored run in "
                        + sink.target() + ": it was reset since this run was launched"));
                if (state.run() != run || !state.incarnation().equals(incarnation)) {
                    throw new JobConflictException("job " + job + " in " + sink.target() + " holds run " + state.run()
                            + " of incarnation " + state.incarnation() + ", not the run " + run + " of " + incarnation
                            + " this application was launched for: it was reset or run elsewhere since");
                }
            }
            JobDecision decision = new JobDecision.Resume(state);
            events.starting(decision, state);
            return new Outcome.Completed(job, decision, runner.run(settings, sink, state,
                    options(settings.options().limits()), listener));
        } finally {
            try {
                joined.close();
            } catch (Exception e) {
                // the run's own outcome matters
            }
        }
    }
}
