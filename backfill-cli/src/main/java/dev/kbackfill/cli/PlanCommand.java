package dev.kbackfill.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;

import dev.kbackfill.core.read.archive.ConnectorArchive;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.KafkaOffsetSource;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RangeResolver;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kbackfill plan}: resolve a request into per-partition offset ranges and show or store them. */
@Command(name = "plan", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = {"Resolve --from/--to into a half-open offset range [start, end) for every partition, "
                + "with a note for every adjustment. Reads nothing but offsets and writes nothing to Kafka.",
                "The plan goes to stdout; notes and warnings go to stderr."},
        customSynopsis = "kbackfill plan --topic TOPIC --from BOUND --to BOUND [OPTIONS]",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:planned", "1:the cluster failed or did not answer", "2:bad input (a bound, topic, "
                + "partition or zone)"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill plan --topic orders --from 2024-01-01 --to 2024-01-02",
                "  kbackfill plan --topic orders --from now-1d --to latest --out plan.json",
                "  kbackfill plan --topic orders --from '{\"orders\":{\"0\":23,\"1\":-2}}' \\",
                "      --to latest --format json",
                "  kbackfill plan --topic orders --from 2024-01-01 --to 2024-02-01 --rate 50000"})
final class PlanCommand implements Callable<Integer> {

    enum Format { table, json, spark }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    RequestOptions request;

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table",
            description = "table (default), json (the plan document), or spark (startingOffsets/endingOffsets).")
    Format format;

    @Option(names = "--rate", paramLabel = "RECORDS_PER_SECOND",
            description = "A rate measured earlier (a report's records per second, a benchmark's) to estimate how long "
                    + "the run takes.")
    Long rate;

    @Option(names = "--out", paramLabel = "FILE",
            description = "Also write the plan document (JSON) to FILE, e.g. for 'kbackfill run --plan FILE'.")
    Path outFile;

    @Option(names = "--chart", paramLabel = "FILE",
            description = "Also draw the plan to FILE (.svg, or .html for a page): per partition the range against the "
                    + "log, and what retention deleted.")
    Path chartFile;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        // bad bounds are refused on their own line, before the default cluster is named
        request.toRequest(org.apache.kafka.common.IsolationLevel.READ_COMMITTED);
        Map<String, Object> config = kafka.clientConfig();
        BackfillRequest backfill = request.toRequest(kafka.isolationLevel(config));
        AtomicFile.checkWritable(spec.commandLine(), "--out", outFile);
        AtomicFile.checkWritable(spec.commandLine(), "--chart", chartFile);
        if (rate != null && rate < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --rate '" + rate
                    + "': expected records per second, a whole number >= 1");
        }
        Plan plan;
        Map<Integer, Long> sizes;
        try (KafkaOffsetSource source = KafkaOffsetSource.create(config)) {
            plan = ConnectorArchive.resolving(new RangeResolver(source), backfill).resolve(backfill);
            sizes = format == Format.table ? source.logSizes(plan.topic(),
                    new java.util.TreeSet<>(plan.partitions().stream().map(r -> r.partition()).toList())) : Map.of();
        }
        if (outFile != null) {
            writeAtomically(outFile, plan.toJson());
        }
        if (chartFile != null) {
            Timeline.of(plan).draw(chartFile);
        }
        switch (format) {
            case table -> {
                PlanTable.print(plan, out);
                out.println(PlanTable.estimate(plan, sizes, rate));
            }
            case json -> out.print(plan.toJson());
            case spark -> out.println("{\"startingOffsets\":" + plan.sparkStartingOffsets() + ",\"endingOffsets\":"
                    + plan.sparkEndingOffsets() + "}");
        }
        out.flush();
        PlanTable.printNotes(plan, err);
        if (outFile != null) {
            err.println("plan written to " + outFile);
        }
        if (chartFile != null) {
            err.println("chart drawn in " + chartFile);
        }
        err.flush();
        return ExitCodes.OK;
    }

    /** Resolves a request against the cluster that {@code config} names. */
    static Plan resolve(Map<String, Object> config, BackfillRequest request) {
        try (KafkaOffsetSource source = KafkaOffsetSource.create(config)) {
            return ConnectorArchive.resolving(new RangeResolver(source), request).resolve(request);
        }
    }

    private static void writeAtomically(Path file, String content) {
        try {
            AtomicFile.replace(file, content);
        } catch (IOException e) {
            throw new CliFailure("cannot write the plan to " + file + ": " + e, e);
        }
    }
}
