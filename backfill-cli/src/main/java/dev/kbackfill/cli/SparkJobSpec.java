package dev.kbackfill.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RequestException;

/**
 * What a Spark run of a job is given ({@code spark-submit ... kbackfill-spark.jar --spec FILE}): the frozen plan,
 * the job's name, the engine as the job's spec records it, the command line the driver runs (sink, formats, modes,
 * Kafka settings; secrets stay in the environment), the deterministic split of the plan's partitions into waves,
 * and the cap on concurrent database writers. Versioned by {@code kbackfill-spark-spec}.
 *
 * @param job            the job name
 * @param engine         the engine, e.g. {@code spark, 64 partitions per wave} ({@link dev.kbackfill.core.sink.JobSpec#ENGINE})
 * @param plan           the plan to run
 * @param arguments      the {@code run} command line, without the launch's own options
 * @param waves          the plan's partitions, wave by wave; a wave's number is its index from 1
 * @param maxConnections the most database writers at once
 */
public record SparkJobSpec(String job, String engine, Plan plan, List<String> arguments, List<List<Integer>> waves,
                           int maxConnections) {

    public static final int FORMAT_VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    public SparkJobSpec {
        arguments = List.copyOf(arguments);
        waves = waves.stream().map(List::copyOf).toList();
    }

    /** The plan's partitions in order, {@code perWave} to a wave: the same plan always splits the same way. */
    public static List<List<Integer>> waves(Plan plan, int perWave) {
        List<List<Integer>> waves = new ArrayList<>();
        List<Integer> current = new ArrayList<>();
        for (PartitionRange r : plan.partitions()) {
            current.add(r.partition());
            if (current.size() == perWave) {
                waves.add(current);
                current = new ArrayList<>();
            }
        }
        if (!current.isEmpty()) {
            waves.add(current);
        }
        return waves;
    }

    public String toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("kbackfill-spark-spec", FORMAT_VERSION);
        root.put("job", job);
        root.put("engine", engine);
        try {
            root.set("plan", JSON.readTree(plan.toJson()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ArrayNode args = root.putArray("arguments");
        arguments.forEach(args::add);
        ArrayNode w = root.putArray("waves");
        waves.forEach(wave -> {
            ArrayNode a = w.addArray();
            wave.forEach(a::add);
        });
        root.put("maxConnections", maxConnections);
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @throws RequestException for a file that is not a spec of this version */
    public static SparkJobSpec read(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new RequestException("cannot read --spec '" + file + "': " + e.getMessage());
        }
        return fromJson(text, "--spec '" + file + "'");
    }

    /** @throws RequestException for a document that is not a spec of this version */
    public static SparkJobSpec fromJson(String json) {
        return fromJson(json, "spec");
    }

    private static SparkJobSpec fromJson(String json, String what) {
        try {
            JsonNode root = JSON.readTree(json);
            int version = root.path("kbackfill-spark-spec").asInt(-1);
            if (version != FORMAT_VERSION) {
                throw new RequestException("invalid " + what + ": expected a kbackfill Spark job spec of "
                        + "version " + FORMAT_VERSION + " (written by 'kbackfill run --engine spark --spark-spec-out FILE')");
            }
            List<String> args = new ArrayList<>();
            root.path("arguments").forEach(a -> args.add(a.asText()));
            List<List<Integer>> waves = new ArrayList<>();
            root.path("waves").forEach(w -> {
                List<Integer> wave = new ArrayList<>();
                w.forEach(p -> wave.add(p.asInt()));
                waves.add(wave);
            });
            return new SparkJobSpec(root.path("job").asText(), root.path("engine").asText(),
                    Plan.fromJson(root.get("plan").toString()), args, waves, root.path("maxConnections").asInt(8));
        } catch (IOException | RuntimeException e) {
            if (e instanceof RequestException re) {
                throw re;
            }
            throw new RequestException("invalid " + what + ": " + e.getMessage());
        }
    }
}
