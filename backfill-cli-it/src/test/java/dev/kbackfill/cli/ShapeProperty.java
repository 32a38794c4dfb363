package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.testservices.ShapeTopic;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The row shape as a property, through the command line against a real broker and a real sink (a subclass per
 * sink): seeded random topics ({@link ShapeTopic}: records that add and drop fields, carry a number that is sometimes
 * whole and sometimes fractional, headers now and then, tombstones and poison records), under random {@code --where},
 * {@code --columns}, {@code --rename} and {@code --header-columns} with {@code --on-error skip}, written once in one
 * run and one batch
 * and once split at random into runs and batches: both end in one final state, and {@code kbackfill verify} agrees
 * with the split one.
 *
 * <p>A lake table's number types are fixed by the batch that creates it (Iceberg widens no number column to a
 * decimal, Delta no double): where {@link #creationFixesTypes()}, both writes create the table with the same first run (whose
 * records carry every field, and the number whole and fractional), and only the rest is split.
 */
abstract class ShapeProperty {

    /** Records per partition; two partitions. */
    private static final int PER_PARTITION = 30;
    private static final int TRIALS = 4;

    static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    /** The sink URL of a new, empty destination named {@code name} (a database, a file, a directory). */
    abstract String sink(String name) throws Exception;

    /** The table {@code --table} names in {@link #sink}'s destination. */
    String table(String name) {
        return "shape_" + name;
    }

    /** Every row of the table, by key: column (lower case) to its value as text, numbers without trailing zeros. */
    abstract Map<String, Map<String, String>> rows(String sink, String table) throws Exception;

    /** Whether {@code kbackfill verify} reads this sink. */
    boolean verifies() {
        return true;
    }

    /** Whether the batch that creates the table fixes its number types (a lake table). */
    boolean creationFixesTypes() {
        return false;
    }

    /** A value as text for comparing two tables: numbers by value, everything else as the sink gives it. */
    static String text(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Number n && !(v instanceof Double d && (d.isNaN() || d.isInfinite()))) {
            BigDecimal d = new BigDecimal(n.toString());
            return d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
        }
        if (v instanceof byte[] b) {
            return new String(b, StandardCharsets.UTF_8);
        }
        if (v instanceof java.nio.ByteBuffer b) {
            byte[] bytes = new byte[b.remaining()];
            b.duplicate().get(bytes);
            return new String(bytes, StandardCharsets.UTF_8);
        }
        String s = v.toString();
        try {
            return new BigDecimal(s).stripTrailingZeros().toPlainString(); // a number a sink gave as text
        } catch (NumberFormatException e) {
            return s;
        }
    }

    /** One trial's topic and options. */
    private record Trial(String topic, List<String> options, int seedRecords) {
    }

    private Trial generate(long seed) throws Exception {
        String topic = "shape-" + getClass().getSimpleName().toLowerCase() + "-" + seed;
        kafka.createTopic(topic, 2, Map.of("retention.ms", "-1"));
        Orders.send(kafka, ShapeTopic.records(topic, seed, PER_PARTITION), Map.of());
        return new Trial(topic, ShapeTopic.options(seed), ShapeTopic.SEED_RECORDS);
    }

    private CliRun run(Trial t, String sink, String table, String from, String to, int batch, String job) {
        List<String> args = new ArrayList<>(List.of("--topic", t.topic(), "--from", from, "--to", to, "--sink", sink,
                "--table", table, "--create-table", "--batch-size", Integer.toString(batch), "--job", job));
        args.addAll(t.options());
        return CliRun.run(kafka, args.toArray(String[]::new));
    }

    private static String at(int offset) {
        return offset == 0 ? "earliest" : offset >= PER_PARTITION ? "latest" : "offset:" + offset;
    }

    /**
     * Two writes of each random topic, one whole and one split at random into runs and batches (runs in order: each
     * partition's log order), end in the same rows; verify agrees with the split one.
     */
    @Test
    void anySplitIntoRunsAndBatchesEndsInOneStateAndVerifyAgrees() throws Exception {
        for (int trial = 0; trial < TRIALS; trial++) {
            long seed = 4_000 + trial * 31L + getClass().getSimpleName().hashCode() % 1000;
            Trial t = generate(seed);
            Random random = new Random(seed * 7);
            int first = creationFixesTypes() ? t.seedRecords() : 0;
            String whole = sink("w" + trial);
            String split = sink("s" + trial);
            String wholeTable = table("w" + trial);
            String splitTable = table("s" + trial);
            List<int[]> wholeRuns = new ArrayList<>();
            List<int[]> splitRuns = new ArrayList<>();
            if (first > 0) {
                wholeRuns.add(new int[] {0, first, 1000});
                splitRuns.add(new int[] {0, first, 1000});
            }
            wholeRuns.add(new int[] {first, PER_PARTITION, 1000});
            int at = first;
            while (at < PER_PARTITION) {
                int to = Math.min(PER_PARTITION, at + 1 + random.nextInt(PER_PARTITION / 2));
                splitRuns.add(new int[] {at, to, 1 + random.nextInt(5)});
                at = to;
            }
            List<String> said = new ArrayList<>();
            for (Object[] write : new Object[][] {{whole, wholeTable, wholeRuns}, {split, splitTable, splitRuns}}) {
                @SuppressWarnings("unchecked")
                List<int[]> runs = (List<int[]>) write[2];
                for (int[] r : runs) {
                    String job = "shape-" + trial + "-" + write[1] + "-" + r[0];
                    CliRun c = run(t, (String) write[0], (String) write[1], at(r[0]), at(r[1]), r[2], job);
                    said.add(job + " " + t.options() + " [" + r[0] + ", " + r[1] + ") batch " + r[2] + ": exit "
                            + c.exitCode());
                    assertThat(c.exitCode()).as("seed %d: %s%n%s%s", seed, said, c.out(), c.err()).isZero();
                }
            }
            Map<String, Map<String, String>> a = rows(whole, wholeTable);
            Map<String, Map<String, String>> b = rows(split, splitTable);
            assertThat(a).as("seed %d: some rows", seed).isNotEmpty();
            assertThat(sameColumns(b, a)).as("seed %d: %s", seed, said).isEqualTo(sameColumns(a, b));
            if (!verifies()) {
                continue;
            }
            List<String> verify = new ArrayList<>(List.of("verify", "--bootstrap-server", kafka.bootstrapServers(),
                    "--progress", "none", "--topic", t.topic(), "--from", "earliest", "--to", "latest", "--sink",
                    split, "--table", splitTable));
            verify.addAll(t.options().subList(2, t.options().size())); // verify has no --on-error: poison is not judged
            CliRun v = CliRun.of(verify.toArray(String[]::new));
            assertThat(v.exitCode()).as("seed %d: verify of the split write %s%n%s%s", seed, said, v.out(), v.err())
                    .isZero();
        }
    }

    /** {@code rows} with every column of either table, a column it lacks being null in every row. */
    private static Map<String, Map<String, String>> sameColumns(Map<String, Map<String, String>> rows,
                                                               Map<String, Map<String, String>> other) {
        TreeSet<String> columns = new TreeSet<>();
        rows.values().forEach(r -> columns.addAll(r.keySet()));
        other.values().forEach(r -> columns.addAll(r.keySet()));
        Map<String, Map<String, String>> out = new TreeMap<>();
        rows.forEach((key, row) -> {
            Map<String, String> all = new TreeMap<>();
            columns.forEach(c -> all.put(c, row.getOrDefault(c, "null")));
            out.put(key, all);
        });
        return out;
    }
}
