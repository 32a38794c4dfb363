package dev.kbackfill.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.run.Rejects;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.JobRun;
import dev.kbackfill.core.run.JobDecision;
import dev.kbackfill.core.run.PartitionStats;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RequestException;
import dev.kbackfill.spark.launch.SparkLaunch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kbackfill [run]}: plan (or resume) a job and write its ranges into the sink, exactly once. */
@Command(name = "run", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = {"Backfill a range of a topic into a sink: upserts keyed by the record key, progress stored in the "
                + "sink in the same transaction as the rows. A rerun resumes where the last one stopped; a finished "
                + "job with fixed bounds does nothing; one with moving bounds (latest, now-1d) starts its next run.",
                "Results go to stdout, progress and notes to stderr."},
        customSynopsis = {"kbackfill run --topic TOPIC --from BOUND --to BOUND [OPTIONS]",
                "       kbackfill run --plan FILE [OPTIONS]",
                "       kbackfill --topic TOPIC --from BOUND --to BOUND [OPTIONS]"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done, nothing to do, or stopped at --max-records/--max-duration (the next run continues)",
                "1:runtime failure (the message says where each partition stands; a rerun resumes)",
                "2:bad input (nothing was read or written)",
                "3:job conflict (the job is running, or was created with another spec)",
                "4:--verify: the run finished, and the target does not hold the final state of its plan",
                "130:stopped on SIGINT at a batch boundary (a rerun resumes)",
                "143:stopped on SIGTERM at a batch boundary (a rerun resumes)"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill --topic orders --from 2024-01-01 --to 2024-01-02",
                "  kbackfill run --topic orders --from 2024-01-01 --to 2024-01-02 \\",
                "      --sink jdbc:postgresql://db.internal/app --sink-user backfill \\",
                "      --table public.orders",
                "  kbackfill run --plan plan.json --sink delta:/data/lake/orders --create-table",
                "  kbackfill --topic orders --from continue:2024-01-01 --to latest \\",
                "      --job orders-hourly --sink jdbc:postgresql://db.internal/app \\",
                "      --max-records-per-second 20000 --report last-run.json"})
final class RunCommand implements Callable<Integer> {

    static final String REGISTRY_PASSWORD_ENV = JobDefinition.REGISTRY_PASSWORD_ENV;
    static final String REGISTRY_TOKEN_ENV = JobDefinition.REGISTRY_TOKEN_ENV;
    static final String REGISTRY_TRUSTSTORE_PASSWORD_ENV = JobDefinition.REGISTRY_TRUSTSTORE_PASSWORD_ENV;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** The command line, whose handle a signal stops this command's run through. */
    @CommandLine.ParentCommand
    Kbackfill root;

    @Mixin
    RequestOptions request;

    @Option(names = "--plan", paramLabel = "FILE", description = "Run a plan written by 'kbackfill plan --out FILE' "
            + "instead of --topic/--from/--to.")
    Path planFile;

    @Mixin
    SinkOptions sink;

    @Mixin
    KafkaOptions kafka;

    @Mixin
    EngineOptions engineOptions;

    @Option(names = "--job", paramLabel = "NAME", description = "The job name (default: the topic and a hash of the "
            + "request as typed and the sink, so the same command line is the same job).")
    String job;

    @Mixin
    DecodingOptions decodingOptions;

    @Option(names = "--on-error", paramLabel = "POLICY", defaultValue = "fail",
            completionCandidates = Candidates.OnError.class,
            description = "A record that cannot be decoded, or that the sink refuses (a value its column cannot hold): "
                    + "fail (default: stop, naming its partition and offset) or skip (count it as rejected).")
    String onError;

    @Option(names = "--dead-letter", paramLabel = "FILE|topic:NAME",
            description = "Keep records that cannot be decoded or that the sink refuses, raw, with their coordinates "
                    + "and the error: appended to a JSON-lines FILE (created at the first), or produced to a topic.")
    String deadLetter;

    @Option(names = "--batch-size", paramLabel = "N",
            description = "Rows (distinct keys) per transaction or commit; a batch is reduced to the last record per "
                    + "key as it is read, and also ends after 10 times this many records (default: the sink's; for "
                    + "databases an eighth of the heap at 1 KB per key, 20000 to 500000 (32768 in -Xmx256m); 20000 for "
                    + "topics; 250000 for Delta).")
    Integer batchSize;

    @Option(names = "--strict-time", description = "Write only records whose timestamp lies in [from, to); count the rest as filtered.")
    boolean strictTime;

    @Option(names = "--retry-for", paramLabel = "DURATION", defaultValue = "5m",
            description = "Retry transient failures (database connection lost, broker or schema registry unavailable) "
                    + "with backoff for this long before failing, resuming from the sink's progress each time: 30s, "
                    + "5m (default), 1h, or 0 to fail at once.")
    String retryFor;

    @Option(names = "--max-records", paramLabel = "N",
            description = "Stop this run after about N records, at the end of the batch that reaches it (its progress "
                    + "committed); the next run continues there.")
    Long maxRecords;

    @Option(names = "--max-duration", paramLabel = "DURATION",
            description = "Stop this run after this long (30m, 2h), at the end of the batch being read; the next run "
                    + "continues there.")
    String maxDuration;

    @Option(names = "--max-records-per-second", paramLabel = "N",
            description = "Read at most N records per second (a burst of one second's worth, then the rate).")
    Long recordsPerSecond;

    @Option(names = "--max-bytes-per-second", paramLabel = "N",
            description = "Read at most N bytes of keys and values per second; K, M and G multiply by 1000 (10M).")
    String bytesPerSecond;

    @Option(names = "--verify", description = "After the run (or when there is nothing to do), verify that the sink "
            + "holds the final state of the run's plan, as 'kbackfill verify --job' does: the summary and --report "
            + "say what it found; exit 4 if the target disagrees.")
    boolean verifyAfter;

    @Option(names = "--publish-after-verify", description = "Rebuild into a shadow of the --table (TABLE_kbackfill_"
            + "shadow, created like it), verify the shadow against the range, and only if it agrees put it in the "
            + "table's place in one atomic step (the table kept as TABLE_kbackfill_previous); if it disagrees, leave "
            + "the table untouched, keep the shadow and exit 4. JDBC sinks (PostgreSQL, MariaDB/MySQL, SQLite); Iceberg "
            + "writes the branch kbackfill_shadow and fast-forwards main to it; Delta writes the table "
            + "PATH_kbackfill_shadow and replaces the table's files with its rows in one commit.")
    boolean publishAfterVerify;

    /** The shadow and its publish, with --publish-after-verify. */
    private dev.kbackfill.core.sink.Publication publication;

    @Option(names = "--timings", description = "Print on stderr, as the command ends, when each phase of the run "
            + "ended in milliseconds from bin/kbackfill's start (or the JVM's) and how long it took (launcher, JVM start, options, the job "
            + "opened, the plan resolved, first records read, first batch committed, the run's end, closing).")
    boolean printTimings;

    /** With --timings: the phases' ends. */
    private Timings timings;

    @Option(names = "--report", paramLabel = "FILE",
            description = "Write a JSON report of the run to FILE (job, run, outcome, exit code, plan, per-partition "
                    + "counts, timings), whatever the outcome.")
    Path reportFile;

    @Option(names = "--metrics-file", paramLabel = "FILE",
            description = "Write the run's metrics in the Prometheus text format to FILE when it ends, whatever the "
                    + "outcome (for node_exporter's textfile collector: a FILE ending in .prom in its directory).")
    Path metricsFile;

    @Option(names = "--metrics-otlp", paramLabel = "URL",
            description = "Push the run's metrics over OTLP/HTTP to URL when it ends (e.g. "
                    + "http://collector:4318/v1/metrics; headers from $OTEL_EXPORTER_OTLP_HEADERS).")
    URI metricsOtlp;

    @Option(names = "--lineage", paramLabel = "URL|FILE",
            description = "Send OpenLineage run events (START, then COMPLETE or FAIL; spec 2-0-2): POSTed to an "
                    + "http(s) URL (a lineage backend; /api/v1/lineage when the URL has no path), or appended to FILE "
                    + "as JSON lines. The topic is the input, the target the output; the offset ranges, rows written "
                    + "and --verify's result go with them.")
    String lineage;

    @Option(names = "--lineage-namespace", paramLabel = "NAMESPACE", defaultValue = "kbackfill",
            description = "The namespace of the job in lineage events (default: kbackfill).")
    String lineageNamespace;

    private RunReport report;

    @Option(names = "--progress", paramLabel = "PROGRESS", defaultValue = "auto",
            description = "auto (bar on a terminal, else plain), bar (a live line), plain, json or none.")
    RunProgress.Mode progress;

    @Override
    public Integer call() {
        if (!printTimings) {
            return runCommand();
        }
        timings = new Timings();
        timings.mark("options parsed");
        try {
            return runCommand();
        } finally {
            timings.mark("command done");
            timings.print(spec.commandLine().getErr());
        }
    }

    private void mark(String phase) {
        if (timings != null) {
            timings.mark(phase);
        }
    }

    private Integer runCommand() {
        if (progress == RunProgress.Mode.json) {
            // every line of stderr a JSON object, the failure line included (printed through this command's err)
            spec.commandLine().setErr(JsonLinesWriter.over(spec.commandLine().getErr()));
        }
        checkJobName();
        AtomicFile.checkWritable(spec.commandLine(), "--report", reportFile);
        AtomicFile.checkWritable(spec.commandLine(), "--metrics-file", metricsFile);
        if (metricsOtlp != null && !(List.of("http", "https").contains(String.valueOf(metricsOtlp.getScheme()))
                && metricsOtlp.getHost() != null)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --metrics-otlp '" + metricsOtlp
                    + "': expected an http:// or https:// URL, e.g. http://collector:4318/v1/metrics");
        }
        if (lineage != null && !RunLineage.isUrl(lineage)) {
            AtomicFile.checkWritable(spec.commandLine(), "--lineage", Path.of(lineage));
        }
        if (reportFile == null && metricsFile == null && metricsOtlp == null && lineage == null) {
            return runJob();
        }
        report = new RunReport(reportFile == null ? null : reportFile.toAbsolutePath(),
                metricsFile == null && metricsOtlp == null ? null
                        : new RunMetrics(metricsFile == null ? null : metricsFile.toAbsolutePath(), metricsOtlp),
                lineage == null ? null : new RunLineage(lineage, lineageNamespace));
        if (job != null) {
            report.job(job); // named in the report and the metrics even when the run is refused before it starts
        }
        PrintWriter err = spec.commandLine().getErr();
        try {
            int code = runJob();
            report.write(code, null, err);
            return code;
        } catch (CommandLine.ParameterException e) {
            throw e; // bad input: nothing ran, nothing to report
        } catch (RuntimeException e) {
            if (e instanceof dev.kbackfill.core.run.RunFailure f && f.summary() != null) {
                report.failed(f.summary());
            }
            report.write(Kbackfill.exitCodeOf(e), e.getMessage(), err);
            throw e;
        }
    }

    /** A run as the options ask for it, checked: nothing is opened yet. */
    private record Prepared(JobDefinition definition, RecordDecoder decoder, BackfillRequest backfill,
                            SparkLaunch launch) {
    }

    /** Parses and checks the options into the job, refusing bad input (exit 2) before anything is opened. */
    private Prepared prepare(PrintWriter out, PrintWriter err) {
        Optional<SparkLaunch.Options> onSpark = engineOptions.check();
        Optional<Plan> filePlan = readPlanFile();
        if (filePlan.isEmpty()) {
            // bad bounds are refused on their own line, before the default cluster is named
            request.toRequest(org.apache.kafka.common.IsolationLevel.READ_COMMITTED);
        }
        Map<String, Object> config = kafka.clientConfig();
        BackfillRequest backfill = filePlan.map(Plan::request).orElseGet(() -> request.toRequest(kafka.isolationLevel(config)));
        if (report != null) {
            report.topic(backfill.topic());
        }
        // an archive whose files do not fit its layout is refused before anything is opened
        dev.kbackfill.core.read.archive.ConnectorArchive.of(backfill).ifPresent(a -> a.partitions(backfill.topic()));
        if (batchSize != null && batchSize < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --batch-size '" + batchSize
                    + "': expected a whole number >= 1");
        }
        JobDefinition definition = definition(backfill, filePlan);
        if (publishAfterVerify) {
            definition = shadowed(definition, onSpark.isPresent(), config);
        }
        RecordDecoder decoder = definition.decoder();
        if (verifyAfter || publishAfterVerify) {
            // what --verify cannot check (an insert-only job) is refused before anything is read or written
            dev.kbackfill.core.verify.Verification.of(definition, decoder,
                    dev.kbackfill.core.verify.Verification.Options.DEFAULTS);
        }
        SparkLaunch launch = null;
        if (onSpark.isPresent() && backfill.archive().isPresent()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--archive is not available with --engine "
                    + "spark yet: the engine's executors read Kafka only; run the backfill locally");
        }
        if (onSpark.isPresent()) {
            SparkLaunch.check(definition);
            launch = new SparkLaunch(onSpark.get(), out, err, root.runs);
        }
        if (sink.isDefault()) {
            err.println("no --sink given: writing to the embedded default, SQLite file "
                    + Path.of("kbackfill.db").toAbsolutePath() + ", table " + definition.sinkSettings(config).table());
        }
        return new Prepared(definition, decoder, backfill, launch);
    }

    /**
     * {@code --publish-after-verify}: the job writing the shadow of its table; refused, before anything is opened,
     * where the sink has no atomic publish, beside a live writer (whose writes to the table while the shadow is built
     * the publish would drop), and on the Spark engine (not built yet).
     */
    private JobDefinition shadowed(JobDefinition definition, boolean onSpark, Map<String, Object> config) {
        if (definition.liveWriter() == dev.kbackfill.core.run.LiveWriter.YES) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--publish-after-verify cannot be combined "
                    + "with --live-writer yes: the live writer keeps writing the table while the shadow is built, and "
                    + "the publish would drop what it wrote meanwhile; stop it first (then --live-writer no), or fill "
                    + "the gap in place with a run or 'kbackfill repair'");
        }
        if (onSpark) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--publish-after-verify is not available "
                    + "with --engine spark yet: run the rebuild locally");
        }
        dev.kbackfill.core.sink.SinkSettings settings = definition.sinkSettings(config);
        publication = dev.kbackfill.core.sink.SinkFactory.factoryFor(settings.url()).publication(settings);
        return definition.writingTo(publication.shadow().target());
    }

    /** Parses and checks the options, runs the job (or writes its Spark spec), prints how it ended. */
    private Integer runJob() {
        try {
            return runJobs();
        } finally {
            if (publication != null) {
                publication.close();
            }
        }
    }

    private Integer runJobs() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Prepared prepared = prepare(out, err);
        mark("options checked, job defined (settings, decoder)");
        if (publication != null) {
            publication.prepare().forEach(d -> err.println("shadow " + publication.shown() + " made like "
                    + "the table: " + d));
        }
        JobDefinition definition = prepared.definition();
        try (JobRun wired = JobRun.open(definition, prepared.decoder())) {
            mark("sink opened (connection, schema)");
            Sink target = wired.sink();
            if (report != null && report.lineage() != null) {
                dev.kbackfill.core.sink.SinkSettings settings = definition.sinkSettings();
                report.lineage().datasets(dev.kbackfill.core.sink.SinkFactory.kafkaTopic(definition.kafkaConfig().get("bootstrap.servers"),
                        prepared.backfill().topic()), dev.kbackfill.core.sink.SinkFactory.factoryFor(settings.url()).dataset(settings),
                        target.jobStore().store());
            }
            RunProgress[] display = {null}; // made once the sink is open: it names the job
            JobState[] started = {null}; // the run's state, whose plan --verify checks
            BackfillJob.Events events = events(err, target, prepared.backfill(), display, started);
            RunListener listener = listener(err, display);
            if (prepared.launch() != null && engineOptions.specOut != null) {
                return writeSpec(prepared, wired, wired.protocol(events, listener, BackfillJob.Runner.LOCAL), out);
            }
            BackfillJob protocol = wired.protocol(events, listener, prepared.launch() != null
                    ? prepared.launch().runner(definition) : BackfillJob.Runner.LOCAL);
            BackfillJob.Outcome outcome;
            try {
                outcome = root.runs.during(() -> wired.run(protocol));
                mark("run ended (the last batch committed)");
            } finally {
                if (display[0] != null) {
                    display[0].close();
                }
            }
            int code = printOutcome(outcome, prepared, wired, started[0], out, err);
            mark("outcome printed" + (verifyAfter || publication != null ? ", verified" : ""));
            return code;
        } finally {
            mark("closed (reader, sink)");
        }
    }

    /** {@code --spark-spec-out}: the run decided as the protocol would, its spec written for a Spark driver. */
    private int writeSpec(Prepared prepared, JobRun wired, BackfillJob protocol, PrintWriter out) {
        Sink target = wired.sink();
        SparkLaunch.Written written = prepared.launch().writeSpec(protocol, target, prepared.definition(),
                engineOptions.specOut, wired.cluster());
        if (written instanceof SparkLaunch.Written.AlreadyDone done) {
            printNothingToDo(done.state().job(), done.state(), prepared.backfill(), target.target(), out);
        } else if (written instanceof SparkLaunch.Written.Spec ready) {
            out.println("wrote the Spark job spec of job " + ready.job() + " to " + engineOptions.specOut
                    + "; run it with:");
            out.println(String.join(" ", ready.command()));
        }
        return ExitCodes.OK;
    }

    /** What the command line prints as the protocol decides: warnings, notes, retries, the run it starts. */
    private BackfillJob.Events events(PrintWriter err, Sink target, BackfillRequest backfill, RunProgress[] display,
                                      JobState[] started) {
        return new BackfillJob.Events() {
            @Override
            public void opened(String name, List<String> warnings) {
                mark("job's state read");
                if (report != null) {
                    report.job(name);
                }
                warnings.forEach(w -> err.println("warning: " + w));
                if (display[0] == null) {
                    display[0] = new RunProgress(err, progress, name);
                }
            }

            @Override
            public void noted(String name, List<String> notes) {
                notes.forEach(n -> err.println("note: " + n));
            }

            @Override
            public void retrying(int attempt, java.time.Duration delay, RuntimeException cause) {
                err.println("retrying in " + Math.max(1, delay.toSeconds()) + " s (attempt " + (attempt + 1)
                        + ", --retry-for " + retryFor + "): " + cause.getMessage());
                err.flush();
            }

            @Override
            public void starting(JobDecision decision, JobState state) {
                mark("plan resolved, run begun (metadata, offsets, time lookups)");
                started[0] = state;
                if (report != null) {
                    report.starting(state, err);
                }
                if (display[0] != null) {
                    display[0].beside(RunBeacon.start(state.job(), target.jobStore().store(), state.run()));
                }
                if (decision instanceof JobDecision.Resume) {
                    err.println("resuming job " + state.job() + " run " + state.run() + ": " + state.remaining()
                            + " offsets left of " + state.plan().totalSpan());
                } else {
                    err.println("starting job " + state.job() + " (run " + state.run()
                            + (decision instanceof JobDecision.NextRun ? ", the previous run being complete" : "")
                            + "): " + state.plan().totalSpan() + " offsets of " + backfill.topic() + " into "
                            + target.target());
                    PlanTable.printNotes(state.plan(), err);
                }
                err.flush();
            }
        };
    }

    /** The run's progress on the display, its notes on stderr. */
    private RunListener listener(PrintWriter err, RunProgress[] display) {
        return new RunListener() {
            @Override
            public void onProgress(long done, long total, long records, long bytes) {
                mark("first batch committed");
                display[0].onProgress(done, total, records, bytes);
            }

            @Override
            public void onRead(long read, long total, long records, long bytes) {
                mark("first records read");
                if (display[0] != null) {
                    display[0].onRead(read, total, records, bytes);
                }
            }

            @Override
            public void onNote(String note) {
                err.println("note: " + note);
                err.flush();
            }
        };
    }

    /**
     * Prints how the run ended: nothing to do, or its summary, why it stopped short, what it set aside; then
     * {@code --verify}. Returns the exit code.
     */
    private int printOutcome(BackfillJob.Outcome outcome, Prepared prepared, JobRun wired, JobState started,
                             PrintWriter out, PrintWriter err) {
        Sink target = wired.sink();
        if (outcome instanceof BackfillJob.Outcome.NothingToDo nothing) {
            if (report != null) {
                report.nothingToDo(nothing.state());
            }
            printNothingToDo(nothing.job(), nothing.state(), prepared.backfill(), target.target(), out);
            return verifyAfter || publication != null ? verify(prepared.definition(), prepared.decoder(), nothing.state(), target, out, err)
                    : ExitCodes.OK;
        }
        RunSummary summary = ((BackfillJob.Outcome.Completed) outcome).summary();
        if (report != null) {
            report.completed(summary);
        }
        printSummary(summary, target.target(), out);
        summary.warnings().forEach(w -> err.println("warning: " + w));
        long left = summary.left();
        String signal = dev.kbackfill.core.run.StopRequest.reason();
        if (left > 0 && signal != null) {
            err.println("stopped on " + signal + " with " + left + " offsets left, every partition committed up to "
                    + "its NEXT above; rerun the same command to resume job " + summary.job());
            err.flush();
            return signal.equals("SIGINT") ? 130 : 143;
        }
        if (left > 0) {
            err.println("stopped at this run's limit (" + String.join(", ", limitOptions()) + ") with " + left
                    + " offsets left; the next run of job " + summary.job() + " continues where this one stopped");
        }
        printSetAside(summary, wired.rejects(), err);
        if (!verifyAfter && publication == null) {
            return ExitCodes.OK;
        }
        if (left > 0) {
            err.println(publication != null ? "not verified, not published: this run stopped with " + left
                    + " offsets left in the shadow " + publication.shown() + "; the next run continues, "
                    + "verifies and publishes when it finishes"
                    : "not verified: this run stopped with " + left + " offsets left (--verify checks a "
                    + "finished run; the next run verifies when it finishes)");
            return ExitCodes.OK;
        }
        return verify(prepared.definition(), prepared.decoder(), started, target, out, err);
    }

    /** Records that could not be decoded, or held a value the target cannot hold: where they went. */
    private static void printSetAside(RunSummary summary, Rejects rejects, PrintWriter err) {
        String aside = rejects.destination().isEmpty() ? "skipped (--on-error skip)"
                : "written to " + rejects.destination();
        if (summary.rejected() > summary.refused()) {
            err.println((summary.rejected() - summary.refused()) + " record(s) could not be decoded and were "
                    + aside);
        }
        if (summary.refused() > 0) {
            err.println(summary.refused() + " record(s) held a value the target cannot hold and were " + aside
                    + "; their keys keep their last record the target took");
        }
    }

    /** {@code --verify}: the finished run's plan against what the sink now holds, decoding with the run's decoder. */
    private int verify(JobDefinition definition, RecordDecoder decoder, JobState state, Sink target, PrintWriter out,
                       PrintWriter err) {
        err.println("verifying job " + state.job() + " run " + state.run() + ": " + state.plan().totalSpan()
                + " offsets of " + state.plan().topic() + " against " + target.target());
        err.flush();
        dev.kbackfill.core.verify.VerifyReport v = dev.kbackfill.core.verify.Verification.of(definition, decoder,
                dev.kbackfill.core.verify.Verification.Options.DEFAULTS).verify(state.plan(), target);
        if (report != null) {
            report.verified(v);
        }
        out.print("verify: ");
        VerifyCommand.print(v, target.target(), out);
        out.flush();
        if (publication == null) {
            return v.agrees() ? ExitCodes.OK : ExitCodes.DISAGREES;
        }
        if (!v.agrees()) {
            out.println("not published: the shadow " + publication.shown() + " disagrees with the range; the "
                    + "table is untouched and the shadow kept for a look ('kbackfill repair' can fix it, then the same "
                    + "command publishes)");
            out.flush();
            return ExitCodes.DISAGREES;
        }
        publication.publish(state.job()).forEach(d -> out.println("publish: " + d));
        out.flush();
        return ExitCodes.OK;
    }

    /**
     * The job as this command line defines it: every option checked, with the value it took from the command line,
     * the environment or the settings file ({@link SettingsDefaults}), so that an engine running it elsewhere needs
     * none of them; a plan file's plan frozen in it.
     */
    JobDefinition definition(BackfillRequest backfill, Optional<Plan> filePlan) {
        return new JobDefinition(Optional.ofNullable(job), backfill, filePlan, kafka.client(), sink.target(backfill.topic()),
                decoding(), poison(), strictTime, limits(),
                batchSize == null ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(batchSize), retryDuration(),
                engineOptions.specName(), sink.liveWriter());
    }

    /** The run's rates and limits, checked. */
    dev.kbackfill.core.run.RunLimits limits() {
        CommandLine cli = spec.commandLine();
        for (Object[] o : new Object[][] {{"--max-records", maxRecords}, {"--max-records-per-second", recordsPerSecond}}) {
            if (o[1] != null && (Long) o[1] < 1) {
                throw new CommandLine.ParameterException(cli, "invalid " + o[0] + " '" + o[1]
                        + "': expected a whole number >= 1");
            }
        }
        long bytes = 0;
        if (bytesPerSecond != null) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{1,15})([kKmMgG]?)").matcher(bytesPerSecond.strip());
            if (!m.matches() || Long.parseLong(m.group(1)) < 1) {
                throw new CommandLine.ParameterException(cli, "invalid --max-bytes-per-second '" + bytesPerSecond
                        + "': expected a whole number >= 1, optionally with K, M or G (10M = 10,000,000)");
            }
            bytes = Long.parseLong(m.group(1)) * switch (m.group(2).toUpperCase(Locale.ROOT)) {
                case "K" -> 1_000L;
                case "M" -> 1_000_000L;
                case "G" -> 1_000_000_000L;
                default -> 1L;
            };
        }
        java.time.Duration duration = maxDuration == null ? java.time.Duration.ZERO
                : Durations.parse(cli, "--max-duration", maxDuration, null);
        if (maxDuration != null && duration.isZero()) {
            throw new CommandLine.ParameterException(cli, "invalid --max-duration '" + maxDuration
                    + "': expected a duration above zero, such as 30m or 2h");
        }
        return new dev.kbackfill.core.run.RunLimits(maxRecords == null ? 0 : maxRecords, duration,
                recordsPerSecond == null ? 0 : recordsPerSecond, bytes);
    }

    java.time.Duration retryDuration() {
        return Durations.parse(spec.commandLine(), "--retry-for", retryFor, "to fail at once");
    }

    /** How records become rows, as the options say. */
    JobDefinition.Decoding decoding() {
        return decodingOptions.decoding(spec.commandLine(), sink.copiesRecords());
    }

    /** What a record that cannot be decoded does, as the options say. */
    JobDefinition.Poison poison() {
        if (!onError.equals("fail") && !onError.equals("skip")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --on-error '" + onError
                    + "': expected fail or skip");
        }
        if (deadLetter != null) {
            if (deadLetter.startsWith("topic:")) {
                String topic = deadLetter.substring("topic:".length());
                if (!topic.matches("[a-zA-Z0-9._-]{1,249}")) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "invalid --dead-letter '" + deadLetter
                            + "': expected FILE or topic:NAME with a valid topic name");
                }
                return new JobDefinition.Poison(onError.equals("skip"), Optional.of(deadLetter));
            }
            Path file = Path.of(deadLetter).toAbsolutePath();
            if (!Files.isDirectory(file.getParent()) || Files.isDirectory(file)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "invalid --dead-letter '" + deadLetter
                        + "': expected FILE in an existing directory, or topic:NAME");
            }
            return new JobDefinition.Poison(onError.equals("skip"), Optional.of(file.toString()));
        }
        return new JobDefinition.Poison(onError.equals("skip"), Optional.empty());
    }

    private Optional<Plan> readPlanFile() {
        if (planFile == null) {
            return Optional.empty();
        }
        if (request.given()) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--plan cannot be combined with --topic, --from, --to or --partitions: the plan file holds them");
        }
        try {
            return Optional.of(Plan.fromJson(Files.readString(planFile)));
        } catch (NoSuchFileException e) {
            throw new RequestException("cannot read --plan '" + planFile + "': no such file");
        } catch (IOException e) {
            throw new RequestException("cannot read --plan '" + planFile + "': " + e.getMessage());
        }
    }

    private List<String> limitOptions() {
        List<String> given = new java.util.ArrayList<>();
        if (maxRecords != null) {
            given.add("--max-records " + maxRecords);
        }
        if (maxDuration != null) {
            given.add("--max-duration " + maxDuration);
        }
        return given;
    }

    /**
     * A job name is stored as a key of the sink's job state: 1 to 200 characters, no control characters, and no
     * {@code /}, which names the Spark engine's sub-jobs ({@code JOB/pN@RUN}) so that no job of a user's can be taken
     * for one, or collide with one.
     */
    private void checkJobName() {
        if (job == null) {
            return;
        }
        boolean control = job.chars().anyMatch(Character::isISOControl);
        if (job.isBlank() || job.length() > 200 || job.contains("/") || control) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --job '" + job.replaceAll("\\p{Cntrl}", "?")
                    + "': expected a name of 1 to 200 characters without '/' (kept for the Spark engine's sub-jobs) "
                    + "or control characters, e.g. orders-backfill");
        }
    }

    static void printNothingToDo(String job, JobState state, BackfillRequest request, String target, PrintWriter out) {
        out.println(dev.kbackfill.core.run.RunText.nothingToDo(job, state, request, target));
    }

    static void printSummary(RunSummary s, String target, PrintWriter out) {
        out.println(dev.kbackfill.core.run.RunText.headline(s, target));
        if (s.keptOut() > 0) {
            out.printf("%d change(s) kept out: the target holds a newer version of their key or this very one (or, "
                    + "under insert-only, the key; or a row of another writer nothing showed older)%n", s.keptOut());
        }
        if (s.supersededInLog() > 0) {
            out.printf("%d change(s) superseded in the log: a newer record of their key follows them in the log, which "
                    + "the live writer has written or will write%n", s.supersededInLog());
        }
        if (s.late() > 0) {
            out.printf("%d record(s) late: their timestamp lies below an earlier record's of their partition (a "
                    + "producer clock behind its log); ordered by their log's time%n", s.late());
        }
        // the column of records superseded in the log only where a run met a live writer's
        boolean inLog = s.supersededInLog() > 0;
        out.printf("%-9s  %10s  %10s  %10s  %10s  " + (inLog ? "%10s  " : "%s") + "%10s  %8s  %8s  %12s  %12s%n",
                "PARTITION", "READ", "WRITTEN", "KEPT OUT", "SUPERSEDED", inLog ? "IN LOG" : "", "FILTERED", "REJECTED",
                "LOST", "NEXT", "END");
        for (PartitionStats p : s.partitions()) {
            out.printf("%-9d  %10d  %10d  %10d  %10d  " + (inLog ? "%10d  " : "%s") + "%10d  %8d  %8d  %12d  %12d%n",
                    p.partition(), p.read(), p.written(), p.keptOut(), p.superseded(),
                    inLog ? (Object) p.supersededInLog() : "", p.filtered(), p.rejected(), p.lost(), p.next(), p.end());
        }
        out.printf("%-9s  %10d  %10d  %10d  %10d  " + (inLog ? "%10d  " : "%s") + "%10d  %8d  %8d%n", "total", s.read(),
                s.written(), s.keptOut(), s.superseded(), inLog ? (Object) s.supersededInLog() : "", s.filtered(),
                s.rejected(), s.lost());
        out.flush();
    }
}
