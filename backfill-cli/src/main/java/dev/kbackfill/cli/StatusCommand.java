package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

import dev.kbackfill.core.sink.JobIdentity;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.RequestException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code kbackfill status}: a job's plan and per-partition progress, as stored in its sink, and the run under way on
 * this machine if there is one ({@link RunBeacon}).
 */
@Command(name = "status", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Show a job's stored plan and how far each partition has been written, and how far a run "
                + "under way on this machine has read and committed.",
        customSynopsis = "kbackfill status --job NAME --sink URL [OPTIONS]",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:shown", "1:the sink or the cluster failed", "2:bad input, or no such job in that sink"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill status --job orders-hourly --sink jdbc:postgresql://db.internal/app",
                "  kbackfill status --job orders-hourly --sink delta:/data/lake/orders \\",
                "      --format json"})
final class StatusCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    JobOptions options;

    @Mixin
    KafkaOptions kafka;

    enum Format { table, json }

    @CommandLine.Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table",
            description = "table (default) or json: one JSON document (job, run, complete, offsets left, request, "
                    + "plan, spec, and per partition start, next and end), for scripts and cron.")
    Format format;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (JobStore sink = SinkFactory.jobStore(options.settings(kafka))) {
            sink.openForJobs();
            JobState s = sink.load(options.job).orElseThrow(() -> new RequestException("no job named '" + options.job
                    + "' in " + sink.store() + "; 'kbackfill run' prints the job name"));
            long total = s.plan().totalSpan();
            long left = s.remaining();
            java.util.Optional<RunBeacon.UnderWay> underWay = RunBeacon.underWay(s.job(), sink.store());
            if (format == Format.json) {
                out.println(json(s, underWay));
                out.flush();
                return ExitCodes.OK;
            }
            out.printf("job %s run %d: %s, %.1f%% (%d of %d offsets left)%n", s.job(), s.run(),
                    s.complete() ? "complete" : "in progress", total == 0 ? 100.0 : 100.0 * (total - left) / total, left, total);
            underWay.ifPresent(u -> out.println(describe(u)));
            out.printf("request %s, planned %s against topic id %s%n", JobIdentity.describe(s.plan().request()),
                    s.plan().resolvedAt(), s.plan().topicId());
            if (s.spec().isKnown()) {
                java.util.List<String> parts = new java.util.ArrayList<>();
                s.spec().binding().forEach((k, v) -> {
                    if (!k.equals(dev.kbackfill.core.sink.JobSpec.REQUEST) && !k.equals(dev.kbackfill.core.sink.JobSpec.TOPIC)) {
                        parts.add(k + " " + v);
                    }
                });
                out.printf("bound to %s%n", String.join(", ", parts));
            }
            out.printf("%-9s  %12s  %12s  %12s  %6s%n", "PARTITION", "START", "NEXT", "END", "DONE");
            for (PartitionRange r : s.plan().partitions()) {
                long next = s.next(r);
                out.printf("%-9d  %12d  %12d  %12d  %5.1f%%%n", r.partition(), r.start(), next, r.end(),
                        r.span() == 0 ? 100.0 : 100.0 * (next - r.start()) / r.span());
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    /** A run under way, as its process last told: which, where, since when, how far read and committed. */
    static String describe(RunBeacon.UnderWay u) {
        long ago = Math.max(0, java.time.Duration.between(u.updated(), java.time.Instant.now()).toSeconds());
        String progress = u.total() < 0 ? "planning its reads"
                : String.format(java.util.Locale.ROOT, "read %.1f%% (%d of %d offsets of this run, %d records), "
                        + "committed %.1f%%", percent(u.read(), u.total()), u.read(), u.total(), u.records(),
                        percent(u.done(), u.total()));
        return "run " + u.run() + " under way: process " + u.pid() + " on " + u.host() + " since " + u.started()
                + ", " + progress + ", as of " + ago + " s ago";
    }

    private static double percent(long part, long total) {
        return total == 0 ? 100.0 : 100.0 * part / total;
    }

    /** The job's state as one JSON document. */
    static String json(JobState s) {
        return json(s, java.util.Optional.empty());
    }

    /** The job's state as one JSON document, with the run under way if there is one ({@code "underWay"}). */
    static String json(JobState s, java.util.Optional<RunBeacon.UnderWay> underWay) {
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        com.fasterxml.jackson.databind.node.ObjectNode root = mapper.createObjectNode();
        root.put("job", s.job());
        root.put("run", s.run());
        root.put("complete", s.complete());
        root.put("offsetsLeft", s.remaining());
        root.put("offsetsTotal", s.plan().totalSpan());
        root.put("request", JobIdentity.describe(s.plan().request()));
        root.put("topic", s.plan().topic());
        root.put("topicId", s.plan().topicId());
        root.put("plannedAt", s.plan().resolvedAt().toString());
        com.fasterxml.jackson.databind.node.ObjectNode spec = root.putObject("spec");
        s.spec().binding().forEach(spec::put);
        com.fasterxml.jackson.databind.node.ArrayNode partitions = root.putArray("partitions");
        for (PartitionRange r : s.plan().partitions()) {
            partitions.addObject().put("partition", r.partition()).put("start", r.start()).put("next", s.next(r))
                    .put("end", r.end());
        }
        underWay.ifPresent(u -> root.putObject("underWay").put("run", u.run()).put("pid", u.pid())
                .put("host", u.host()).put("startedAt", u.started().toString())
                .put("updatedAt", u.updated().toString()).put("read", u.read()).put("done", u.done())
                .put("total", u.total()).put("records", u.records()));
        return root.toString();
    }
}
