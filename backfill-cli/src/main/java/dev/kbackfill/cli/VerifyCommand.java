package dev.kbackfill.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.run.RunLimits;
import dev.kbackfill.core.sink.JobSpec;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.verify.Verdict;
import dev.kbackfill.core.verify.Verification;
import dev.kbackfill.core.verify.VerifyReport;
import dev.kbackfill.core.version.Version;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RequestException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kbackfill verify}: whether a target holds exactly the final state of a range, key by key. */
@Command(name = "verify", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = {"Check that a target holds, for every key of a range, the range's final state: reads the range "
                + "as a run does (the same decoding, key identity and version rule), reads back what the target "
                + "holds for those keys, and sorts each key into matching, missing, extra, stale, newer or different. "
                + "Writes nothing; works on targets kbackfill never wrote.",
                "Results go to stdout, notes to stderr."},
        customSynopsis = {"kbackfill verify --job NAME --sink URL [OPTIONS]",
                "       kbackfill verify --topic TOPIC --from BOUND --to BOUND --sink URL [OPTIONS]",
                "       kbackfill verify --plan FILE --sink URL [OPTIONS]"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:the target agrees (every key matching, or newer)",
                "1:runtime failure (the source or the target could not be read)",
                "2:bad input (nothing was read)",
                "4:the target disagrees: some key is missing, extra, stale or different"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill verify --job orders-hourly --sink jdbc:postgresql://db.internal/app",
                "  kbackfill verify --topic orders --from 2024-01-01 --to 2024-01-02 \\",
                "      --sink delta:/data/lake/orders --format json --samples 100"})
class VerifyCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    RequestOptions request;

    @Option(names = "--plan", paramLabel = "FILE", description = "Verify the ranges of a plan written by "
            + "'kbackfill plan --out FILE' instead of --topic/--from/--to.")
    Path planFile;

    @Option(names = "--job", paramLabel = "NAME", description = "Verify the plan of the job's latest run, as stored "
            + "in the sink (the options must decode as the job's runs do: its formats, key fields and modes).")
    String job;

    @Mixin
    SinkOptions sink;

    @Mixin
    KafkaOptions kafka;

    @Mixin
    DecodingOptions decodingOptions;

    @Option(names = "--strict-time", description = "As the run was given: judge only records whose timestamp lies in [from, to).")
    boolean strictTime;

    @Option(names = "--samples", paramLabel = "N", defaultValue = "10",
            description = "Keys shown per class that is not matching, with their source coordinates and the "
                    + "target's values (default: ${DEFAULT-VALUE}).")
    int samples;

    @Option(names = "--progress", paramLabel = "PROGRESS", defaultValue = "auto",
            description = "auto (bar on a terminal, else plain), bar, plain, json or none: how far the read of the "
                    + "range is, on stderr.")
    RunProgress.Mode progress;

    enum Format { table, json }

    @Option(names = "--format", paramLabel = "OUTPUT", defaultValue = "table",
            description = "table (default) or json: one JSON document (counts per class, samples, records read, "
                    + "lost, rejected, target rows read), for scripts and go/no-go checks.")
    Format format;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (samples < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --samples '" + samples
                    + "': expected a whole number >= 0");
        }
        What what = what(err);
        Plan plan = what.plan();
        Optional<JobState> stored = what.stored();
        JobDefinition definition = what.definition();
        Map<String, Object> config = what.config();
        dev.kbackfill.core.record.RecordDecoder decoder = definition.decoder(); // one registry client, one schema cache
        Verification verification = Verification.of(definition, decoder, Verification.Options.DEFAULTS.withSamples(samples));
        try (Sink target = SinkFactory.forSettings(definition.sinkSettings(config))) {
            target.openForVerify();
            if (stored.isPresent()) {
                checkSpec(stored.get(), definition, decoder, target);
            } else {
                checkAgainstJobs(target, definition, decoder, plan.topic());
            }
            err.println("verifying " + plan.totalSpan() + " offsets of " + plan.topic() + " against " + target.target());
            err.flush();
            RunProgress display = new RunProgress(err, progress, stored.map(JobState::job).orElse("verify " + plan.topic()));
            if (repairing()) {
                return repair(plan, stored, definition, verification, config, target, display, out, err);
            }
            VerifyReport report;
            try (display) {
                report = verification.verify(plan, target, listener(display, err));
            }
            if (format == Format.json) {
                out.println(json(report, stored.map(JobState::job).orElse(null), target.target()));
            } else {
                print(report, target.target(), out);
            }
            out.flush();
            return report.agrees() ? ExitCodes.OK : ExitCodes.DISAGREES;
        }
    }

    /** Whether this command repairs what it finds ({@code kbackfill repair}). */
    boolean repairing() {
        return false;
    }

    /** Whether a repair only says what it would change. */
    boolean dryRun() {
        return false;
    }

    /**
     * Repairs what verification finds, as run N of the job's (or range's) repair job, holding the job's lock so that
     * no run of it writes meanwhile; prints what was found, done and judged again.
     */
    private int repair(Plan plan, Optional<JobState> stored, JobDefinition definition, Verification verification,
                       Map<String, Object> config, Sink target, RunProgress display, PrintWriter out, PrintWriter err) {
        String repairJob = dev.kbackfill.core.verify.Repair.jobName(stored.map(JobState::job),
                dev.kbackfill.core.sink.JobIdentity.defaultName(plan.request(), target.target()));
        dev.kbackfill.core.verify.Repair.Outcome outcome;
        try (AutoCloseable lock = stored.isPresent() && !dryRun() ? target.jobStore().lock(stored.get().job()) : () -> { };
             display) {
            outcome = new dev.kbackfill.core.verify.Repair(verification, Verification.Options.DEFAULTS.withSamples(samples))
                    .repair(plan, target, definition.sinkSettings(config), repairJob, dryRun(), listener(display, err));
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new CliFailure("cannot release the lock of job " + stored.map(JobState::job).orElse("") + ": " + e, e);
        }
        if (format == Format.json) {
            out.println(RepairOutput.json(outcome, stored.map(JobState::job).orElse(null), target.target()));
        } else {
            RepairOutput.print(outcome, target.target(), out);
        }
        out.flush();
        return outcome.agrees() ? ExitCodes.OK : ExitCodes.DISAGREES;
    }

    /** What to verify: a job's stored run (or runs), a plan file's range, or a range resolved now; and how. */
    private record What(Optional<JobState> stored, Plan plan, JobDefinition definition, Map<String, Object> config) {
    }

    private What what(PrintWriter err) {
        if (job == null && planFile == null) {
            // bad bounds first: before any cluster (the default one included) is named
            request.toRequest(org.apache.kafka.common.IsolationLevel.READ_COMMITTED);
        }
        Map<String, Object> config = kafka.clientConfig();
        if (job != null) {
            if (request.given() || planFile != null) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--job verifies the plan its latest run "
                        + "stored: drop --topic, --from, --to, --partitions and --plan, or drop --job to verify a range");
            }
            JobState state = loadJob(config);
            Plan plan = state.plan();
            JobDefinition definition = null;
            Optional<String> runs = state.spec().definition();
            if (runs.isPresent()) {
                definition = asTheJobRan(JobDefinition.fromStored(runs.get(), plan), plan);
                config = definition.kafkaConfig();
            }
            if (state.run() > 1) {
                plan = everyRun(state, config, err);
            }
            return new What(Optional.of(state), plan, definition == null ? definition(plan) : definition, config);
        }
        Plan plan;
        if (planFile != null) {
            if (request.given()) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--plan cannot be combined with --topic, --from, --to or --partitions: the plan file holds them");
            }
            plan = readPlan();
        } else {
            BackfillRequest backfill = request.toRequest(kafka.isolationLevel(config));
            try (dev.kbackfill.resolver.KafkaOffsetSource offsets = dev.kbackfill.resolver.KafkaOffsetSource.create(config)) {
                // a range below the log start resolves in the archive the request names, as run's and plan's do
                plan = dev.kbackfill.core.read.archive.ConnectorArchive.resolving(
                        new dev.kbackfill.resolver.RangeResolver(offsets), backfill).resolve(backfill);
            }
        }
        return new What(Optional.empty(), plan, definition(plan), config);
    }

    /**
     * A job of several runs: every run's range where they can be told (a {@code continue:} job's are contiguous),
     * else its latest run's.
     */
    private Plan everyRun(JobState state, Map<String, Object> config, PrintWriter err) {
        Optional<Plan> every;
        try (dev.kbackfill.resolver.KafkaOffsetSource offsets = dev.kbackfill.resolver.KafkaOffsetSource.create(config)) {
            every = dev.kbackfill.core.run.JobPlanner.everyRun(dev.kbackfill.core.read.archive.ConnectorArchive
                    .resolving(new dev.kbackfill.resolver.RangeResolver(offsets), state.plan().request()), state);
        }
        if (every.isPresent()) {
            err.println("job " + state.job() + " has run " + state.run() + " times from "
                    + state.plan().request().fromText() + ": verifying what runs 1 to " + state.run()
                    + " covered, from its first bound to where run " + state.run() + " ends");
            return every.get();
        }
        err.println("job " + state.job() + " has run " + state.run() + " times; verifying run "
                + state.run() + "'s range only (the ranges of earlier runs of a request such as '"
                + state.plan().request().fromText() + "' are not kept; verify them as a range)");
        return state.plan();
    }

    private JobDefinition definition(Plan plan) {
        return new JobDefinition(Optional.ofNullable(job), plan.request(), Optional.of(plan), kafka.client(),
                sink.target(plan.topic()), decodingOptions.decoding(spec.commandLine(), sink.copiesRecords()),
                JobDefinition.Poison.FAIL, strictTime, RunLimits.NONE, java.util.OptionalInt.empty(),
                java.time.Duration.ZERO, JobSpec.LOCAL, sink.liveWriter());
    }

    /**
     * The job as its runs were given it (its stored definition), with what this command line gives explicitly in its
     * place: the source cluster's settings (a job's cluster may be reached otherwise from here), and any decoding or
     * sink option, which {@link #checkSpec} then compares with the job's (a mismatch is bad input).
     */
    private JobDefinition asTheJobRan(JobDefinition runs, Plan plan) {
        CommandLine cli = spec.commandLine();
        JobDefinition.KafkaClient client = given("--bootstrap-server", "--command-config", "-X", "--connect-timeout")
                ? kafka.client() : runs.kafka();
        JobDefinition.Decoding mine = decodingOptions.decoding(cli, sink.copiesRecords());
        JobDefinition.Decoding theirs = runs.decoding();
        JobDefinition.Decoding decoding = new JobDefinition.Decoding(
                given("--key-format") ? mine.keyFormat() : theirs.keyFormat(),
                given("--value-format") ? mine.valueFormat() : theirs.valueFormat(),
                given("--key-column") ? mine.keyColumn() : theirs.keyColumn(),
                given("--value-column") ? mine.valueColumn() : theirs.valueColumn(),
                given("--key-fields") ? mine.keyFields() : theirs.keyFields(),
                given("--schema-registry-url") ? mine.registry() : theirs.registry(),
                given("--version-field") ? mine.versionField() : theirs.versionField(),
                given("--validate") ? mine.validate() : theirs.validate(),
                given("--where") ? mine.where() : theirs.where(),
                given("--columns", "--rename", "--header-columns") ? mine.mapping() : theirs.mapping());
        dev.kbackfill.core.sink.SinkTarget here = sink.target(plan.topic());
        dev.kbackfill.core.sink.SinkTarget ran = runs.sink();
        dev.kbackfill.core.sink.SinkTarget target = new dev.kbackfill.core.sink.SinkTarget(here.url(), given("--table") ? here.table() : ran.table(),
                given("--sink-user") ? here.user() : ran.user(),
                given("--on-conflict") ? here.conflict() : ran.conflict(),
                given("--on-tombstone") ? here.tombstones() : ran.tombstones(), false, ran.ignoreUnknownFields(),
                here.clientFile().isPresent() ? here.clientFile() : ran.clientFile(),
                here.client().isEmpty() ? ran.client() : here.client(), Map.of(), false, List.of(),
                given("--keys-distinct-in-collation") ? here.keysDistinctInCollation() : ran.keysDistinctInCollation());
        return new JobDefinition(Optional.of(job), plan.request(), Optional.of(plan), client, target, decoding,
                JobDefinition.Poison.FAIL, given("--strict-time") ? strictTime : runs.strictTime(), RunLimits.NONE,
                java.util.OptionalInt.empty(), java.time.Duration.ZERO, JobSpec.LOCAL,
                given("--live-writer") ? sink.liveWriter() : runs.liveWriter());
    }

    /** Whether any of these options was given: on the command line, in the environment or the settings file. */
    private boolean given(String... options) {
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        CommandLine.IDefaultValueProvider defaults = spec.defaultValueProvider();
        for (String option : options) {
            if (parsed.hasMatchedOption(option)) {
                return true;
            }
            CommandLine.Model.OptionSpec o = spec.findOption(option);
            try {
                if (o != null && defaults != null && defaults.defaultValue(o) != null) {
                    return true;
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        return false;
    }

    /** The job's stored state; its table is the one --table names, else the one its topic gives. */
    private JobState loadJob(Map<String, Object> config) {
        String topicHint = request.topic != null ? request.topic : "kbackfill_jobs";
        try (dev.kbackfill.core.sink.JobStore store = SinkFactory.jobStore(sink.target(topicHint).settings(topicHint, config))) {
            store.openForJobs();
            return store.load(job).orElseThrow(() -> new RequestException("no job named '" + job + "' in "
                    + store.store() + "; 'kbackfill jobs' lists the jobs there"));
        }
    }

    /** A job is verified as its runs decoded: the same formats, key fields, modes and version field. */
    private void checkSpec(JobState state, JobDefinition definition, dev.kbackfill.core.record.RecordDecoder decoder,
                           Sink target) {
        if (!state.spec().isKnown()) {
            return;
        }
        JobSpec mine = definition.settings(decoder, dev.kbackfill.core.run.Rejects.fail()).build().spec()
                .apply(target.jobStore().destination());
        List<String> differences = mine.differences(state.spec()).stream()
                .filter(d -> !d.startsWith(JobSpec.REQUEST + " ")).toList();
        if (!differences.isEmpty()) {
            throw new RequestException("job '" + state.job() + "' was run otherwise: " + String.join("; ", differences)
                    .replace(", not ", " here, the job's runs had ") + "; pass the options its runs were given");
        }
    }

    /**
     * A range verified against a target that jobs of its topic wrote is verified as they decoded (their version
     * field, filter, mapping, formats and modes): otherwise a table could agree with a verification that judges
     * fewer columns, or other versions, than its runs wrote. When no such job was run with these options, that is
     * bad input, naming the jobs and what differs; a target without job state (another tool's) is judged as asked.
     */
    private void checkAgainstJobs(Sink target, JobDefinition definition,
                                  dev.kbackfill.core.record.RecordDecoder decoder, String topic) {
        List<String> names;
        try {
            names = target.jobStore().jobs();
        } catch (dev.kbackfill.core.sink.SinkConfigException e) {
            return; // a sink that keeps no job state
        }
        JobSpec mine = definition.settings(decoder, dev.kbackfill.core.run.Rejects.fail()).build().spec()
                .apply(target.jobStore().destination());
        List<String> otherwise = new java.util.ArrayList<>();
        for (String name : names) {
            Optional<JobState> state = target.jobStore().load(name);
            if (state.isEmpty() || !state.get().spec().isKnown()
                    || !topic.equals(state.get().spec().parts().get(JobSpec.TOPIC))
                    || !target.jobStore().sameDestination(state.get().spec().parts().get(JobSpec.DESTINATION),
                    mine.parts().get(JobSpec.DESTINATION))) {
                continue;
            }
            List<String> differences = mine.differences(state.get().spec()).stream()
                    .filter(d -> !d.startsWith(JobSpec.REQUEST + " ") && !d.startsWith(JobSpec.DESTINATION + " "))
                    .toList();
            if (differences.isEmpty()) {
                return;
            }
            otherwise.add("'" + name + "' (" + String.join("; ", differences).replace(", not ", " here, its runs had ")
                    + ")");
        }
        if (!otherwise.isEmpty()) {
            throw new RequestException("the target holds job(s) of topic " + topic + " run with other options: "
                    + String.join(", ", otherwise) + "; verify with --job NAME to take a job's own options, or pass "
                    + "the options its runs were given");
        }
    }

    private Plan readPlan() {
        try {
            return Plan.fromJson(Files.readString(planFile));
        } catch (NoSuchFileException e) {
            throw new RequestException("cannot read --plan '" + planFile + "': no such file");
        } catch (IOException e) {
            throw new RequestException("cannot read --plan '" + planFile + "': " + e.getMessage());
        }
    }

    static void print(VerifyReport r, String target, PrintWriter out) {
        out.printf("%s: %d keys of %s judged against %s%n", r.agrees() ? "AGREES" : "DISAGREES", r.keys(), r.topic(),
                target);
        out.printf("%-10s  %10s%n", "CLASS", "KEYS");
        for (Verdict v : Verdict.values()) {
            out.printf("%-10s  %10d%n", v.label(), r.count(v));
        }
        out.printf("records read %d, filtered %d, not decodable %d (not judged), lost to retention %d (not judged); "
                + "target rows read %d%s; %.1f s%n", r.read(), r.filtered(), r.rejected(), r.lost(), r.rowsRead(),
                r.spilled() ? "; keys folded on disk" : "", r.elapsed().toMillis() / 1000.0);
        if (r.count(Verdict.NEWER) > 0) {
            out.printf("%d key(s) newer: the target holds a later version than the range's last (a later run or "
                    + "another job wrote it), or, beside a live writer, the log holds a newer record of the key after "
                    + "the range, the live writer's%n", r.count(Verdict.NEWER));
        }
        r.samples().forEach((v, list) -> list.forEach(s -> out.println(sampleLine(s))));
    }

    static String sampleLine(VerifyReport.Sample s) {
        StringBuilder line = new StringBuilder("  ").append(s.verdict().label()).append(' ').append(s.key())
                .append(": range ends in ").append(s.tombstone() ? "a delete" : "a value").append(" at partition ")
                .append(s.partition()).append(" offset ").append(s.offset()).append(" (")
                .append(java.time.Instant.ofEpochMilli(s.timestamp())).append(')');
        if (s.held() != null) {
            line.append("; target holds ").append(describe(s.held()));
            if (s.held().partition() >= 0 && s.held().timestamp() != s.timestamp()) {
                line.append(" with the timestamp ").append(java.time.Instant.ofEpochMilli(s.held().timestamp()));
            }
        } else if (s.target().isEmpty()) {
            line.append("; target has no row");
        }
        // a field's name where a value differs; otherwise what the version claims that the log does not bear out
        List<String> fields = s.differing().stream().filter(f -> !f.startsWith("version (")).toList();
        s.differing().stream().filter(f -> f.startsWith("version (")).forEach(f -> line.append("; its ").append(f));
        if (!fields.isEmpty()) {
            line.append("; differs in ").append(String.join(", ", fields)).append(": expected ");
            line.append(pick(s.expected(), fields)).append(", target ").append(pick(s.target(), fields));
        } else if (!s.target().isEmpty() && s.differing().isEmpty()) {
            Map<String, Object> shown = new java.util.LinkedHashMap<>();
            s.target().forEach((k, v) -> shown.put(k, dev.kbackfill.core.record.Readable.value(v)));
            line.append("; target values ").append(shown);
        }
        return line.toString();
    }

    private static Map<String, Object> pick(Map<String, Object> values, List<String> fields) {
        Map<String, Object> picked = new java.util.LinkedHashMap<>();
        fields.forEach(f -> picked.put(f, dev.kbackfill.core.record.Readable.value(values.get(f))));
        return picked;
    }

    static String describe(Version v) {
        if (v.partition() < 0) {
            return "a record of another writer at " + java.time.Instant.ofEpochMilli(v.timestamp());
        }
        return "partition " + v.partition() + " offset " + v.offset() + (v.topic() == null || v.topic().isEmpty() ? ""
                : " of " + v.topic()) + (v.field() == null ? "" : " version " + v.field());
    }

    static String json(VerifyReport r, String job, String target) {
        return tree(r, job, target).toString();
    }

    static ObjectNode tree(VerifyReport r, String job, String target) {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode root = mapper.createObjectNode();
        if (job != null) {
            root.put("job", job);
        }
        root.put("topic", r.topic());
        root.put("target", target);
        root.put("agrees", r.agrees());
        root.put("keys", r.keys());
        ObjectNode counts = root.putObject("counts");
        r.counts().forEach((v, n) -> counts.put(v.label(), n));
        root.put("read", r.read()).put("filtered", r.filtered()).put("rejected", r.rejected()).put("lost", r.lost())
                .put("targetRowsRead", r.rowsRead()).put("spilled", r.spilled())
                .put("seconds", r.elapsed().toMillis() / 1000.0);
        ArrayNode samples = root.putArray("samples");
        r.samples().forEach((v, list) -> list.forEach(s -> {
            ObjectNode o = samples.addObject();
            o.put("class", v.label()).put("partition", s.partition()).put("offset", s.offset())
                    .put("timestamp", s.timestamp()).put("tombstone", s.tombstone());
            o.set("key", key(mapper, s.keyFields()));
            o.set("expected", values(mapper, s.expected()));
            if (s.held() != null) {
                Version h = s.held();
                o.putObject("held").put("topic", h.topic()).put("partition", h.partition()).put("offset", h.offset())
                        .put("timestamp", h.timestamp()).put("field", h.field() == null ? null : h.field().toString());
            }
            o.set("target", values(mapper, s.target()));
            ArrayNode differing = o.putArray("differing");
            s.differing().forEach(differing::add);
        }));
        return root;
    }

    /**
     * A key as a JSON object of its fields with their values as typed: text as strings, numbers as numbers, bytes
     * as {@code {"base64": "..."}} (byte for byte), so that a script can look the key up or repair it.
     */
    static ObjectNode key(ObjectMapper mapper, Map<String, Object> fields) {
        ObjectNode o = mapper.createObjectNode();
        fields.forEach((k, v) -> {
            if (v == null) {
                o.putNull(k);
            } else if (v instanceof Number || v instanceof Boolean) {
                o.set(k, mapper.valueToTree(v));
            } else if (v instanceof byte[] b) {
                o.putObject(k).put("base64", java.util.Base64.getEncoder().encodeToString(b));
            } else if (v instanceof java.nio.ByteBuffer buffer) {
                byte[] b = new byte[buffer.remaining()];
                buffer.duplicate().get(b);
                o.putObject(k).put("base64", java.util.Base64.getEncoder().encodeToString(b));
            } else {
                o.put(k, v.toString());
            }
        });
        return o;
    }

    private static ObjectNode values(ObjectMapper mapper, Map<String, Object> values) {
        ObjectNode o = mapper.createObjectNode();
        values.forEach((k, v) -> {
            if (v == null) {
                o.putNull(k);
            } else if (v instanceof Number || v instanceof Boolean) {
                o.set(k, mapper.valueToTree(v));
            } else if (v instanceof byte[] || v instanceof java.nio.ByteBuffer) {
                o.put(k, String.valueOf(dev.kbackfill.core.record.Readable.value(v)));
            } else {
                o.put(k, v.toString());
            }
        });
        return o;
    }

    /** The read's progress on the display, and (unless the display is off) the verification's notes on stderr. */
    private dev.kbackfill.core.run.RunListener listener(RunProgress display, PrintWriter err) {
        return new dev.kbackfill.core.run.RunListener() {
            @Override
            public void onProgress(long done, long total, long records, long bytes) {
                display.onProgress(done, total, records, bytes);
            }

            @Override
            public void onRead(long read, long total, long records, long bytes) {
                display.onRead(read, total, records, bytes);
            }

            @Override
            public void onNote(String note) {
                if (progress != RunProgress.Mode.none) {
                    err.println("note: " + note);
                    err.flush();
                }
            }
        };
    }
}
