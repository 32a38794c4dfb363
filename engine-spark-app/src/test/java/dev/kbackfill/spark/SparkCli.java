package dev.kbackfill.spark;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

import dev.kbackfill.cli.Kbackfill;
import dev.kbackfill.embedded.EmbeddedKafka;

/** One run of the command line in this JVM (Spark, when asked for, in a process of its own), with what it printed. */
record SparkCli(int exitCode, String out, String err) {

    static SparkCli run(EmbeddedKafka broker, String... args) {
        List<String> all = new ArrayList<>(List.of("run", "--bootstrap-server", broker.bootstrapServers(), "--progress",
                "none"));
        all.addAll(List.of(args));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        long started = System.nanoTime();
        int code = Kbackfill.execute(new PrintWriter(out), new PrintWriter(err), all.toArray(String[]::new));
        System.err.printf("[%.1f s] kbackfill %s -> %d%n", (System.nanoTime() - started) / 1e9, String.join(" ", all), code);
        return new SparkCli(code, out.toString(), err.toString());
    }

    /** The same command line on Spark in local mode with two cores, plus {@code extra} launch options. */
    static SparkCli onSpark(EmbeddedKafka broker, List<String> extra, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--engine", "spark"));
        if (!extra.contains("--master")) {
            all.addAll(List.of("--master", "local[2]"));
        }
        all.addAll(extra);
        // the build's JIT setting for short-lived test drivers (see the parent pom's spark.it.jit)
        String driver = System.getProperty("kbackfill.test.sparkDriverOptions", "");
        if (!driver.isBlank() && all.stream().noneMatch(a -> a.startsWith("spark.driver.extraJavaOptions="))) {
            all.addAll(List.of("--conf", "spark.driver.extraJavaOptions=" + driver));
        }
        return run(broker, all.toArray(String[]::new));
    }

    /** {@code kbackfill status} with {@code args}. */
    static SparkCli status(EmbeddedKafka broker, String... args) {
        return command(broker, "status", args);
    }

    /** {@code kbackfill COMMAND} with {@code args}. */
    static SparkCli command(EmbeddedKafka broker, String command, String... args) {
        List<String> all = new ArrayList<>(List.of(command, "--bootstrap-server", broker.bootstrapServers()));
        all.addAll(List.of(args));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Kbackfill.execute(new PrintWriter(out), new PrintWriter(err), all.toArray(String[]::new));
        return new SparkCli(code, out.toString(), err.toString());
    }

    @Override
    public String toString() {
        return "exit " + exitCode + "\n--- out\n" + out + "--- err\n" + err;
    }
}
