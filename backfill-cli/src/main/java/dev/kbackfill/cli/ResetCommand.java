package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.resolver.RequestException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kbackfill reset}: forget a job's plan and progress (never the rows it wrote), explicitly. */
@Command(name = "reset", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Forget a job's stored plan and progress so that its next run starts over with a fresh plan. "
                + "Rows already written stay. Needs --yes.",
        customSynopsis = "kbackfill reset --job NAME --sink URL --yes [OPTIONS]",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:forgotten", "1:the sink failed",
                "2:bad input, --yes missing, or no such job in the sink", "3:the job is running"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill reset --job orders-hourly --sink jdbc:postgresql://db.internal/app \\",
                "      --yes"})
final class ResetCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    JobOptions options;

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--yes", description = "Really reset.")
    boolean yes;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (!yes) {
            throw new RequestException("reset of job '" + options.job + "' needs --yes: it forgets the job's plan and "
                    + "progress, so its next run starts over (rows already written stay)");
        }
        try (JobStore sink = SinkFactory.jobStore(options.settings(kafka))) {
            sink.openForJobs();
            try (AutoCloseable lock = sink.lock(options.job)) {
                if (!sink.reset(options.job)) {
                    throw new RequestException("no job named '" + options.job + "' in "
                            + sink.store());
                }
            }
            out.println("job " + options.job + " reset: its plan and progress are gone; rows already written stay");
            out.flush();
            return ExitCodes.OK;
        }
    }
}
