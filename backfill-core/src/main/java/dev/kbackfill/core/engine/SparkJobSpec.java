package dev.kbackfill.core.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RequestException;

/**
 * What a Spark run of a job is given ({@code spark-submit ... kbackfill-spark.jar --spec FILE}): the job as a value
 * with its name and frozen plan ({@link JobDefinition}; secrets stay in the environment and in files), the
 * deterministic split of the plan's partitions into waves, the cap on concurrent database writers, and whether a
 * launch holds the job's lock and began the run. Versioned by {@code kbackfill-spark-spec}.
 *
 * @param job            the job, named, its plan frozen, its engine the Spark engine's spec name
 * @param waves          the plan's partitions, wave by wave; a wave's number is its index from 1
 * @param maxConnections the most database writers at once
 * @param launched       the run a launching {@code kbackfill run --engine spark} began and holds the lock of while
 *                       Spark runs: the driver then runs exactly it, without deciding or locking, and reports to the
 *                       launch through {@link EngineEvents}; empty for a spec written for a {@code spark-submit} of
 *                       one's own ({@code --spark-spec-out}), whose driver runs the job protocol itself
 * @param wording        the words of the program that wrote the spec, which the driver's messages and notes speak
 *                       (the command line's option names where it launched the run)
 */
public record SparkJobSpec(JobDefinition job, List<List<Integer>> waves, int maxConnections, Optional<Launched> launched,
                           dev.kbackfill.resolver.Wording wording) {

    public static final int FORMAT_VERSION = 2;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The run a launch began.
     *
     * @param run         its number
     * @param incarnation its job's incarnation
     * @param stored      whether the launch stored it in the sink; if not (a table not created yet, or one only the
     *                    engine's writer can commit to), the driver stores it when it starts
     */
    public record Launched(int run, String incarnation, boolean stored) {
        public Launched {
            Objects.requireNonNull(incarnation, "incarnation");
        }

        /** A run the launch stored. */
        public Launched(int run, String incarnation) {
            this(run, incarnation, true);
        }
    }

    /** A spec in the words of this program ({@link dev.kbackfill.resolver.Wording#current()}). */
    public SparkJobSpec(JobDefinition job, List<List<Integer>> waves, int maxConnections, Optional<Launched> launched) {
        this(job, waves, maxConnections, launched, dev.kbackfill.resolver.Wording.current());
    }

    public SparkJobSpec {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(wording, "wording");
        if (job.name().isEmpty() || job.plan().isEmpty()) {
            throw new IllegalArgumentException("a Spark job spec needs the job's name and frozen plan");
        }
        waves = waves.stream().map(List::copyOf).toList();
        Objects.requireNonNull(launched, "launched");
    }

    /** The job's name. */
    public String name() {
        return job.name().orElseThrow();
    }

    /** The plan to run. */
    public Plan plan() {
        return job.plan().orElseThrow();
    }

    /** The engine as the job's spec records it, e.g. {@code spark, 64 partitions per wave}. */
    public String engine() {
        return job.engine();
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
        root.set("job", job.toNode());
        ArrayNode w = root.putArray("waves");
        waves.forEach(wave -> {
            ArrayNode a = w.addArray();
            wave.forEach(a::add);
        });
        root.put("maxConnections", maxConnections);
        launched.ifPresent(l -> {
            ObjectNode n = root.putObject("launched");
            n.put("run", l.run());
            n.put("incarnation", l.incarnation());
            n.put("stored", l.stored());
        });
        ObjectNode words = root.putObject("wording");
        wording.names().forEach((term, name) -> words.put(term.name(), name));
        return root.toPrettyString();
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
                        + "version " + FORMAT_VERSION + " (written by 'kbackfill run --engine spark --spark-spec-out FILE' "
                        + "of this version)");
            }
            List<List<Integer>> waves = new ArrayList<>();
            root.path("waves").forEach(w -> {
                List<Integer> wave = new ArrayList<>();
                w.forEach(p -> wave.add(p.asInt()));
                waves.add(wave);
            });
            JsonNode l = root.path("launched");
            Optional<Launched> launched = l.isObject()
                    ? Optional.of(new Launched(l.path("run").asInt(), l.path("incarnation").asText(),
                    l.path("stored").asBoolean(true)))
                    : Optional.empty();
            java.util.Map<dev.kbackfill.resolver.Wording.Term, String> words = new java.util.EnumMap<>(
                    dev.kbackfill.resolver.Wording.Term.class);
            root.path("wording").properties().forEach(e -> {
                try {
                    words.put(dev.kbackfill.resolver.Wording.Term.valueOf(e.getKey()), e.getValue().asText());
                } catch (IllegalArgumentException unknown) {
                    // a term of a later version: its library words stand
                }
            });
            return new SparkJobSpec(JobDefinition.fromNode(root.path("job")), waves,
                    root.path("maxConnections").asInt(8), launched, dev.kbackfill.resolver.Wording.of(words));
        } catch (IOException | RuntimeException e) {
            if (e instanceof RequestException re && re.getMessage().startsWith("invalid " + what)) {
                throw re;
            }
            throw new RequestException("invalid " + what + ": " + e.getMessage());
        }
    }
}
