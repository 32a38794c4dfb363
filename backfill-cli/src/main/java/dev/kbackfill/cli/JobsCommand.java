package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.SinkFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kbackfill jobs}: the jobs a sink holds state for, a line each. */
@Command(name = "jobs", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "List the jobs whose state a sink holds: run and progress ('kbackfill status --job NAME' shows "
                + "what one is bound to). The Spark engine's per-partition sub-jobs (JOB/pN@RUN) and, for a kafka: "
                + "sink, the jobs of the cluster's other target topics are left out unless --all.",
        customSynopsis = "kbackfill jobs --sink URL [OPTIONS]",
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {"0:listed", "1:the sink cannot be read",
                "2:bad input"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill jobs --sink jdbc:postgresql://db.internal/app",
                "  kbackfill jobs --sink kafka:orders-table --bootstrap-server kafka-1:9092 \\",
                "      --format json --all"})
final class JobsCommand implements Callable<Integer> {

    enum Format { table, json }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    JobStoreOptions store;

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table", description = "table (default) or json.")
    Format format;

    @Option(names = "--all", description = "Also list the Spark engine's sub-jobs and, for a kafka: sink, the jobs "
            + "of every target topic of the cluster.")
    boolean all;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (JobStore sink = SinkFactory.jobStore(store.settings(store.kafkaConfig(kafka)))) {
            sink.openForJobs();
            List<String> names = sink.jobs().stream().filter(n -> all || !n.contains("/")).toList();
            ArrayNode json = new ObjectMapper().createArrayNode();
            if (format == Format.table) {
                out.printf("%-40s  %5s  %-11s  %14s  %-24s  %s%n", "JOB", "RUN", "STATE", "OFFSETS LEFT", "TOPIC",
                        "TARGET");
            }
            for (String name : names) {
                JobState s = sink.load(name).orElse(null);
                if (s == null) {
                    continue; // reset since it was listed
                }
                String destination = s.spec().parts().get(dev.kbackfill.core.sink.JobSpec.DESTINATION);
                if (!all && sink.sharesJobStore() && destination != null && !destination.equals(sink.destination())) {
                    continue; // a job of another target topic in the cluster's job topic
                }
                if (format == Format.json) {
                    json.addObject().put("job", name).put("run", s.run()).put("complete", s.complete())
                            .put("offsetsLeft", s.remaining()).put("topic", s.plan().topic())
                            .put("engine", s.spec().parts().getOrDefault("engine", "local"))
                            .put("target", destination);
                } else {
                    out.printf("%-40s  %5d  %-11s  %,14d  %-24s  %s%n", name, s.run(), s.complete() ? "complete"
                            : "in progress", s.remaining(), s.plan().topic(), destination == null ? "-" : destination);
                }
            }
            if (format == Format.json) {
                out.println(json);
            }
            out.flush();
            return ExitCodes.OK;
        }
    }
}
