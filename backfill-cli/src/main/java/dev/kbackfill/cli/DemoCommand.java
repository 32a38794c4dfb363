package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.Plan;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kbackfill demo}: everything on one machine with no services. Starts a Kafka broker inside this process,
 * fills a sample {@code orders} topic with a day of timestamped orders, plans the backfill of a sub-range, and
 * stops the broker. With {@code --bootstrap-server} and {@code --sink} it does the same against real services
 * (the compose file in {@code docker/}).
 */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Start an embedded Kafka broker, fill a sample 'orders' topic with a day of data (2024-01-01), "
                + "plan a backfill of six of its hours (from 06:00 to 12:00), run it into the default sink (table demo_orders of the SQLite "
                + "file ./kbackfill.db), show a few rows, and stop. Needs no services; --bootstrap-server and --sink "
                + "point it at real ones instead.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done", "1:runtime failure (the broker, the cluster or the sink failed)", "2:bad input"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill demo",
                "  kbackfill demo --bootstrap-server kafka:9092 \\",
                "      --sink jdbc:postgresql://postgres:5432/kbackfill --sink-user kbackfill"})
final class DemoCommand implements Callable<Integer> {

    static final String FROM = "2024-01-01T06:00";
    static final String TO = "2024-01-01T12:00";
    static final String TABLE = "demo_orders";
    static final String JOB = "demo-orders";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** The command line, whose handle a signal stops the demo's run through. */
    @CommandLine.ParentCommand
    Kbackfill root;

    @Option(names = "--records", paramLabel = "N", defaultValue = "8640",
            description = "How many orders to write (default: ${DEFAULT-VALUE}, one every 10 s of the day).")
    int records;

    @Option(names = "--bootstrap-server", paramLabel = "HOST:PORT",
            description = "Use this Kafka cluster instead of an embedded broker: topic orders is created there "
                    + "(retention.ms=-1) and filled if it does not exist, else used as it is.")
    String bootstrapServers;

    @Option(names = "--sink", paramLabel = "URL",
            description = "Backfill into this sink (as run's --sink; password from $KBACKFILL_SINK_PASSWORD) instead "
                    + "of the SQLite file ./kbackfill.db.")
    String sink;

    @Option(names = "--sink-user", paramLabel = "USER", description = "The sink's user, as run's --sink-user.")
    String sinkUser;

    @Override
    public Integer call() {
        if (records < 1 || records > 10_000_000) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --records '" + records
                    + "': expected a count from 1 to 10000000");
        }
        PrintWriter err = spec.commandLine().getErr();
        if (bootstrapServers != null) {
            Map<String, Object> config = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
            fillUnlessPresent(config, err);
            return demo(bootstrapServers, config);
        }
        err.println("starting an embedded Kafka broker (takes about 10 s)...");
        err.flush();
        LakeLibraries.add(); // the broker's libraries (Kafka's server, Scala) are the lake's
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            err.printf("broker up at %s; creating topic %s with %d partitions%n", kafka.bootstrapServers(),
                    DemoData.TOPIC, DemoData.PARTITIONS);
            kafka.createTopic(DemoData.TOPIC, DemoData.PARTITIONS, Map.of());
            fill(kafka.clientConfig(), err);
            int code = demo(kafka.bootstrapServers(), kafka.clientConfig());
            err.println();
            err.println("stopping the embedded broker");
            err.flush();
            return code;
        }
    }

    /** Creates and fills the sample topic on a cluster of the user's, unless it exists there (then it is used). */
    private void fillUnlessPresent(Map<String, Object> config, PrintWriter err) {
        try (Admin admin = Admin.create(config)) {
            if (admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(DemoData.TOPIC)) {
                err.printf("topic %s exists at %s: using its records as they are%n", DemoData.TOPIC,
                        bootstrapServers);
                err.flush();
                return;
            }
            err.printf("creating topic %s with %d partitions at %s (retention.ms=-1: its event times are old)%n",
                    DemoData.TOPIC, DemoData.PARTITIONS, bootstrapServers);
            admin.createTopics(List.of(new NewTopic(DemoData.TOPIC, DemoData.PARTITIONS, (short) -1)
                    .configs(Map.of(TopicConfig.RETENTION_MS_CONFIG, "-1")))).all().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new CliFailure("cannot create the demo topic " + DemoData.TOPIC + " at " + bootstrapServers + ": "
                    + (e.getCause() != null ? e.getCause().getMessage() : "no answer within 30 s"), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliFailure("interrupted while creating the demo topic", e);
        }
        fill(config, err);
    }

    /** Writes the sample orders into the topic. */
    private void fill(Map<String, Object> config, PrintWriter err) {
        DemoData.produce(config, records);
        err.printf("wrote %d orders with event times across %s (UTC)%n", records, DemoData.DAY.toString()
                .substring(0, 10));
    }

    /** Plans the demo range on {@code servers}, backfills it into the sink and shows a few rows. */
    private int demo(String servers, Map<String, Object> clientConfig) {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        err.printf("planning: kbackfill plan --topic %s --from %s --to %s --bootstrap-server %s%n%n",
                DemoData.TOPIC, FROM, TO, servers);
        err.flush();
        BackfillRequest request = BackfillRequest.builder(DemoData.TOPIC).from(FROM).to(TO).build();
        Plan plan = PlanCommand.resolve(clientConfig, request);
        PlanTable.print(plan, out);
        out.println();
        out.flush();
        PlanTable.printNotes(plan, err);

        List<String> sinkArgs = sink == null ? List.of() : sinkUser == null ? List.of("--sink", sink)
                : List.of("--sink", sink, "--sink-user", sinkUser);
        Path db = Path.of("kbackfill.db").toAbsolutePath();
        String target = sink == null ? "the embedded default sink (SQLite " + db + ")" : sink;
        err.printf("%nbackfilling it into %s, table %s:%n", target, TABLE);
        err.printf("kbackfill --topic %s --from %s --to %s --bootstrap-server %s%s --table %s --create-table "
                + "--job %s%n", DemoData.TOPIC, FROM, TO, servers, sinkArgs.isEmpty() ? "" : " "
                + String.join(" ", sinkArgs), TABLE, JOB);
        err.flush();
        resetEarlierDemo(sinkArgs, err);
        List<String> run = new ArrayList<>(List.of("run", "--topic", DemoData.TOPIC, "--from", FROM, "--to", TO,
                "--bootstrap-server", servers, "--table", TABLE, "--create-table", "--job", JOB,
                "--progress", "plain"));
        run.addAll(sinkArgs);
        int code = Kbackfill.execute(System.getenv(), root.runs, out, err, run.toArray(String[]::new));
        if (code != ExitCodes.OK) {
            return code;
        }
        out.println();
        if (sink == null) {
            showRows("jdbc:sqlite:" + db, null, null, out);
        } else if (aDriverReads(sink)) {
            showRows(sink, sinkUser, System.getenv("KBACKFILL_SINK_PASSWORD"), out);
        } else {
            out.printf("the rows are in %s%n", sink);
        }
        out.flush();
        return ExitCodes.OK;
    }

    /**
     * An earlier demo's job is complete; forget it (and, in the default SQLite file, drop the demo's own table)
     * so that this demo runs again, on this demo's broker.
     */
    private static void resetEarlierDemo(List<String> sinkArgs, PrintWriter err) {
        boolean defaultSink = sinkArgs.isEmpty();
        if (defaultSink && !Files.exists(Path.of("kbackfill.db"))) {
            return;
        }
        java.io.StringWriter quiet = new java.io.StringWriter();
        List<String> reset = new ArrayList<>(List.of("reset", "--job", JOB, "--yes"));
        reset.addAll(sinkArgs);
        int code = Kbackfill.execute(new PrintWriter(quiet), new PrintWriter(quiet), reset.toArray(String[]::new));
        if (defaultSink) {
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:kbackfill.db");
                 Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + TABLE);
            } catch (SQLException e) {
                throw new CliFailure("cannot drop the table of an earlier demo from kbackfill.db: " + e.getMessage(),
                        e);
            }
        }
        if (code == ExitCodes.OK) {
            err.println("(forgot job " + JOB + (defaultSink ? " and table " + TABLE : "") + " of an earlier demo)");
        }
    }

    /** Whether a JDBC driver on the classpath reads {@code url}: then the demo shows a few of its rows. */
    private static boolean aDriverReads(String url) {
        try {
            DriverManager.getDriver(url);
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    private static void showRows(String url, String user, String password, PrintWriter out) {
        try (Connection c = DriverManager.getConnection(url, user, password);
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
        } catch (SQLException e) {
            throw new CliFailure("cannot read the demo rows back from " + url + ": " + e.getMessage(), e);
        }
    }
}
