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
 * and took 30 MB more.
 */
final class AotTraining {

    private AotTraining() {
    }

    /** With no argument, against a broker started in this JVM; with one, against the broker at that address. */
    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
                train(kafka.bootstrapServers());
            }
        } else {
            train(args[0]);
        }
    }

    private static void train(String servers) throws Exception {
        Path dir = Files.createTempDirectory("kbackfill-aot-training");
        EmbeddedKafka.createTopic(Map.of("bootstrap.servers", servers), DemoData.TOPIC, DemoData.PARTITIONS,
                Map.of("retention.ms", "-1"));
        try {
            DemoData.produce(Map.of("bootstrap.servers", servers), 3000);
            List<String> range = List.of("--topic", DemoData.TOPIC, "--from", "2024-01-01", "--to", "latest",
                    "--bootstrap-server", servers);
            execute("plan", range);
            for (String sink : List.of("jdbc:sqlite:" + dir.resolve("training.db"), "delta:" + dir.resolve("delta"))) {
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
