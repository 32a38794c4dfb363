package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

import dev.kbackfill.core.sink.JobIdentity;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.RequestException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code kbackfill status}: a job's plan and per-partition progress, as stored in its sink. */
@Command(name = "status", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Show a job's stored plan and how far each partition has been written.")
final class StatusCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    JobOptions options;

    @Mixin
    KafkaOptions kafka;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (Sink sink = SinkFactory.forSettings(options.settings(kafka.clientConfig()))) {
            sink.openForJobs();
            JobState s = sink.load(options.job).orElseThrow(() -> new RequestException("no job named '" + options.job
                    + "' in " + sink.target().replaceFirst(", table .*", "") + "; 'kbackfill run' prints the job name"));
            long total = s.plan().totalSpan();
            long left = s.remaining();
            out.printf("job %s run %d: %s, %.1f%% (%d of %d offsets left)%n", s.job(), s.run(),
                    s.complete() ? "complete" : "in progress", total == 0 ? 100.0 : 100.0 * (total - left) / total, left, total);
            out.printf("request %s, planned %s against topic id %s%n", JobIdentity.describe(s.plan().request()),
                    s.plan().resolvedAt(), s.plan().topicId());
            if (s.spec().isKnown()) {
                java.util.List<String> parts = new java.util.ArrayList<>();
                s.spec().parts().forEach((k, v) -> {
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
}
