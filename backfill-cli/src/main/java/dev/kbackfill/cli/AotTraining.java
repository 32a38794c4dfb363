package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.kbackfill.embedded.EmbeddedKafka;

/**
 * The training run of the AOT cache the build makes where a JDK 25 is present ({@code src/main/aot/make-cache.sh}):
 * in one JVM, the commands a cron job runs, against a broker in a process of its own ({@code EmbeddedKafkaProcess},
 * which the script starts; given no address, a broker started in this process as {@code kbackfill demo} starts one):
 * plan, a run into a new SQLite table and the same range again (all kept out), the same into a new
 * Delta table and again (its probe), status and jobs. The cache then holds the classes they load, linked, and the
 * profiles of the methods they ran; {@code bin/kbackfill} starts the JVM with it on a JDK 25 runtime. A JDK 25 loads
 * every class of the cache as it starts: with the broker's classes in it too, a run into SQLite started 0.1 s later
 * and took 30 MB more. For the same reason the build makes a second cache from the commands without Delta
 * ({@code jdbc}: plan, the runs into SQLite, status, jobs), on kbackfill.jar's class path alone (without the lake
 * libraries, as the launcher starts those commands), which the launcher gives a command whose sink is a database or
 * Kafka, or {@code plan}: with Delta's classes (Hadoop, Parquet) in the cache, a run of 1,000 records into SQLite
 * reached its main method 0.06-0.08 s later.
 */
final class AotTraining {

    private AotTraining() {
    }

    /**
     * With no argument, every command against a broker started in this JVM; with the address of a broker, against
     * that one, the commands of the set named second: {@code all} (the default) or {@code jdbc} (no Delta).
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
                train(kafka.bootstrapServers(), true);
            }
        } else {
            String set = args.length > 1 ? args[1] : "all";
            if (!set.equals("all") && !set.equals("jdbc")) {
                throw new IllegalArgumentException("no training set " + set + ": expected all or jdbc");
            }
            train(args[0], set.equals("all"));
        }
    }

    private static void train(String servers, boolean delta) throws Exception {
        Path dir = Files.createTempDirectory("kbackfill-aot-training");
        try {
            topic(servers);
            List<String> range = List.of("--topic", DemoData.TOPIC, "--from", "2024-01-01", "--to", "latest",
                    "--bootstrap-server", servers);
            execute("plan", range);
            List<String> sinks = new ArrayList<>(List.of("jdbc:sqlite:" + dir.resolve("training.db")));
            if (delta) {
                sinks.add("delta:" + dir.resolve("delta"));
            }
            for (String sink : sinks) {
                List<String> target = List.of("--sink", sink, "--table", "orders");
                for (String job : List.of("first", "again")) {
                    List<String> run = new ArrayList<>(range);
                    run.addAll(target);
                    run.addAll(List.of("--create-table", "--job", job, "--progress", "none"));
                    execute("run", run);
                }
                List<String> status = new ArrayList<>(target);
                status.addAll(List.of("--job", "first"));
                execute("status", status);
                execute("jobs", target);
            }
        } finally {
            try (var paths = Files.walk(dir)) {
                for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** The training's topic, made and filled by the first training against this broker, read as is by the next. */
    private static void topic(String servers) throws Exception {
        Map<String, Object> client = Map.of("bootstrap.servers", servers);
        // by the Admin API, not EmbeddedKafka's helper: the jdbc training runs without the lake libraries, the
        // broker's among them, as the launcher starts such a command (the producer waits for the partitions' leaders)
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(client)) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(DemoData.TOPIC,
                    DemoData.PARTITIONS, (short) 1).configs(Map.of("retention.ms", "-1"))))
                    .all().get(60, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException) {
                return;
            }
            throw new IllegalStateException("cannot create topic " + DemoData.TOPIC + ": " + e.getCause(), e);
        }
        DemoData.produce(client, 3000);
    }

    private static void execute(String command, List<String> args) {
        List<String> all = new ArrayList<>(List.of(command));
        all.addAll(args);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Kbackfill.execute(new PrintWriter(out), new PrintWriter(err), all.toArray(String[]::new));
        if (code != ExitCodes.OK) {
            throw new IllegalStateException("training: kbackfill " + String.join(" ", all) + " exited " + code + ": "
                    + err);
        }
    }
}
