package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.Plan;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kbackfill demo}: everything on one machine with no services. Starts a Kafka broker inside this process,
 * fills a sample {@code orders} topic with a day of timestamped orders, plans the backfill of a sub-range, and
 * stops the broker.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Start an embedded Kafka broker, fill a sample 'orders' topic with a day of data (2024-01-01), "
                + "plan the backfill of 06:00 to 12:00, and stop. Needs no services.")
final class DemoCommand implements Callable<Integer> {

    static final String FROM = "2024-01-01T06:00";
    static final String TO = "2024-01-01T12:00";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--records", paramLabel = "N", defaultValue = "8640",
            description = "How many orders to write (default: ${DEFAULT-VALUE}, one every 10 s of the day).")
    int records;

    @Override
    public Integer call() {
        if (records < 1 || records > 10_000_000) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --records '" + records
                    + "': expected a count from 1 to 10000000");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        err.println("starting an embedded Kafka broker (takes about 10 s)...");
        err.flush();
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            err.printf("broker up at %s; creating topic %s with %d partitions%n", kafka.bootstrapServers(),
                    DemoData.TOPIC, DemoData.PARTITIONS);
            kafka.createTopic(DemoData.TOPIC, DemoData.PARTITIONS, Map.of());
            DemoData.produce(kafka.clientConfig(), records);
            err.printf("wrote %d orders with event times across %s (UTC)%n", records, DemoData.DAY.toString()
                    .substring(0, 10));
            err.printf("planning: kbackfill plan --topic %s --from %s --to %s --bootstrap-server %s%n%n",
                    DemoData.TOPIC, FROM, TO, kafka.bootstrapServers());
            err.flush();
            BackfillRequest request = BackfillRequest.builder(DemoData.TOPIC).from(FROM).to(TO).build();
            Plan plan = PlanCommand.resolve(kafka.clientConfig(), request);
            PlanTable.print(plan, out);
            out.flush();
            PlanTable.printNotes(plan, err);
            err.println();
            err.println("stopping the embedded broker");
            err.flush();
        }
        return ExitCodes.OK;
    }
}
