package dev.kbackfill.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.kbackfill.resolver.RequestException;
import dev.kbackfill.spark.launch.SparkLaunch;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** How {@code run} executes: in this process (the default) or as a Spark application. */
final class EngineOptions {

    enum Engine { local, spark }

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--engine", paramLabel = "ENGINE", defaultValue = "local",
            description = "local (default: this process reads every partition) or spark (the same job as a Spark "
                    + "application: waves of partitions, docs/scale.md).")
    Engine engine;

    @Option(names = "--master", paramLabel = "URL", defaultValue = "local[*]",
            description = "With --engine spark: the Spark master, e.g. local[2], yarn, k8s://HOST:PORT, spark://..., "
                    + "or local-cluster[2,1,1024] for executors that are processes of their own on this machine "
                    + "(default: ${DEFAULT-VALUE}).")
    String master;

    @Option(names = "--deploy-mode", paramLabel = "MODE", description = "With --engine spark: client (default) or cluster.")
    String deployMode;

    @Option(names = "--conf", paramLabel = "KEY=VALUE", description = "With --engine spark: a Spark setting; repeatable.")
    List<String> conf = new ArrayList<>();

    @Option(names = "--spark-wave-partitions", paramLabel = "N", defaultValue = "64",
            description = "With --engine spark: source partitions per wave (one Delta MERGE, or one Spark stage of "
                    + "per-partition writers, per wave; default: ${DEFAULT-VALUE}).")
    int wavePartitions;

    @Option(names = "--spark-max-connections", paramLabel = "N",
            description = "With --engine spark and a database sink: the most writers (connections) at once (default: "
                    + "8; 1 for SQLite).")
    Integer maxConnections;

    @Option(names = "--spark-spec-out", paramLabel = "FILE",
            description = "With --engine spark: write the job spec to FILE and print the spark-submit command that "
                    + "runs it, instead of launching.")
    Path specOut;

    boolean spark() {
        return engine == Engine.spark;
    }

    /**
     * Refuses Spark-only settings without {@code --engine spark}, and bad values.
     *
     * @return the launch's options with {@code --engine spark}, else empty
     */
    java.util.Optional<SparkLaunch.Options> check() {
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        if (!spark()) {
            for (String o : List.of("--master", "--deploy-mode", "--conf", "--spark-wave-partitions",
                    "--spark-max-connections", "--spark-spec-out")) {
                if (parsed.hasMatchedOption(o)) {
                    throw new CommandLine.ParameterException(spec.commandLine(), o + " needs --engine spark");
                }
            }
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.of(new SparkLaunch.Options(master, java.util.Optional.ofNullable(deployMode), conf,
                    wavePartitions, maxConnections == null ? java.util.OptionalInt.empty()
                            : java.util.OptionalInt.of(maxConnections), SparkLaunch.Options.engineDir(besideThisBuild())));
        } catch (RequestException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /** The engine as a job's spec records it: the wave split is part of an unfinished run's shape. */
    String specName() {
        return spark() ? SparkLaunch.Options.engineName(wavePartitions) : "local";
    }

    /** engine-spark-app/target of the checkout this command line was built in. */
    private static Path besideThisBuild() {
        try {
            // backfill-cli/target/kbackfill.jar, or backfill-cli/target/classes
            Path here = Path.of(EngineOptions.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return here.getParent().getParent().getParent().resolve("engine-spark-app").resolve("target");
        } catch (java.net.URISyntaxException | RuntimeException e) {
            return Path.of("engine-spark-app", "target");
        }
    }
}
