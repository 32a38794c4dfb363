package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
                + "plan the backfill of 06:00 to 12:00, run it into the default sink (table demo_orders of the SQLite "
                + "file ./kbackfill.db), show a few rows, and stop. Needs no services.")
final class DemoCommand implements Callable<Integer> {

    static final String FROM = "2024-01-01T06:00";
    static final String TO = "2024-01-01T12:00";
    static final String TABLE = "demo_orders";
    static final String JOB = "demo-orders";

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
            out.println();
            out.flush();
            PlanTable.printNotes(plan, err);

            Path db = Path.of("kbackfill.db").toAbsolutePath();
            err.printf("%nbackfilling it into the embedded default sink (SQLite %s, table %s):%n", db, TABLE);
            err.printf("kbackfill --topic %s --from %s --to %s --bootstrap-server %s --table %s --job %s%n",
                    DemoData.TOPIC, FROM, TO, kafka.bootstrapServers(), TABLE, JOB);
            err.flush();
            resetEarlierDemo(out, err);
            int code = Kbackfill.execute(out, err, "run", "--topic", DemoData.TOPIC, "--from", FROM, "--to", TO,
                    "--bootstrap-server", kafka.bootstrapServers(), "--table", TABLE, "--job", JOB,
                    "--progress", "plain");
            if (code != ExitCodes.OK) {
                return code;
            }
            out.println();
            showRows(db, out);
            err.println();
            err.println("stopping the embedded broker");
            err.flush();
        }
        return ExitCodes.OK;
    }

    /**
     * An earlier demo's job is complete; forget it and drop its table (the demo's own) so that this demo runs
     * again on this demo's broker.
     */
    private static void resetEarlierDemo(PrintWriter out, PrintWriter err) {
        if (!Files.exists(Path.of("kbackfill.db"))) {
            return;
        }
        java.io.StringWriter quiet = new java.io.StringWriter();
        int code = Kbackfill.execute(new PrintWriter(quiet), new PrintWriter(quiet), "reset", "--job", JOB, "--yes");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:kbackfill.db");
             Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + TABLE);
        } catch (SQLException e) {
            throw new CliFailure("cannot drop the table of an earlier demo from kbackfill.db: " + e.getMessage(), e);
        }
        if (code == ExitCodes.OK) {
            err.println("(forgot job " + JOB + " and table " + TABLE + " of an earlier demo)");
        }
    }

    private static void showRows(Path db, PrintWriter out) {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT count(*), count(DISTINCT kafka_key) FROM " + TABLE)) {
                rs.next();
                out.printf("table %s now holds %d rows, one per order key, each the key's last state in the range; "
                        + "a few of them:%n", TABLE, rs.getLong(1));
            }
            try (ResultSet rs = s.executeQuery("SELECT kafka_key, status, amount, updated_at, kafka_partition, "
                    + "kafka_offset FROM " + TABLE + " ORDER BY kafka_key LIMIT 5")) {
                out.printf("%-12s  %-8s  %8s  %-24s  %9s  %6s%n", "KAFKA_KEY", "STATUS", "AMOUNT", "UPDATED_AT",
                        "PARTITION", "OFFSET");
                while (rs.next()) {
                    out.printf("%-12s  %-8s  %8s  %-24s  %9d  %6d%n", rs.getString(1), rs.getString(2),
                            rs.getString(3), rs.getString(4), rs.getInt(5), rs.getLong(6));
                }
            }
            out.flush();
        } catch (SQLException e) {
            throw new CliFailure("cannot read the demo rows back from " + db + ": " + e.getMessage(), e);
        }
    }
}
