package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * The README's Java examples are the code the library example tests compile and run ({@code LibraryExampleIT},
 * {@code JobLibraryExampleIT}), line for line but for the replacements those tests declare (broker, topic, file):
 * an edit of either side alone fails here.
 */
class ReadmeJavaExamplesTest {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();

    private static List<List<String>> readmeJavaBlocks() throws IOException {
        List<List<String>> blocks = new ArrayList<>();
        List<String> current = null;
        for (String line : Files.readAllLines(ROOT.resolve("README.md"))) {
            if (line.equals("```java")) {
                current = new ArrayList<>();
            } else if (line.startsWith("```") && current != null) {
                blocks.add(current);
                current = null;
            } else if (current != null && !line.isBlank() && !line.startsWith("import ")) {
                current.add(line.strip());
            }
        }
        return blocks;
    }

    private static List<String> testExample(String file) throws IOException {
        List<String> lines = Files.readAllLines(ROOT.resolve(file));
        int from = -1;
        int to = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("// --- the README example")) {
                from = i + 1;
            } else if (lines.get(i).contains("// --- end of the README example ---")) {
                to = i;
            }
        }
        assertThat(from).as(file + " marks the README example").isPositive();
        return lines.subList(from, to).stream().map(String::strip).filter(l -> !l.isBlank()).toList();
    }

    private static List<String> replaced(List<String> readme, Map<String, String> replacements) {
        return readme.stream().map(l -> {
            String r = l;
            for (Map.Entry<String, String> e : replacements.entrySet()) {
                r = r.replace(e.getKey(), e.getValue());
            }
            return r;
        }).toList();
    }

    @Test
    void theResolverExampleIsTheCodeLibraryExampleITRuns() throws IOException {
        List<String> readme = readmeJavaBlocks().stream().filter(b -> b.stream().anyMatch(l -> l.contains(
                "new RangeResolver(kafka)"))).findFirst().orElseThrow();
        // the test asserts on the plan before the example's try block closes
        assertThat(readme.get(readme.size() - 1)).isEqualTo("}");
        assertThat(testExample("range-resolver/src/test/java/dev/kbackfill/resolver/LibraryExampleIT.java"))
                .isEqualTo(replaced(readme.subList(0, readme.size() - 1), Map.of("\"localhost:9092\"", "bootstrap")));
    }

    @Test
    void theJobExampleIsTheCodeJobLibraryExampleITRuns() throws IOException {
        List<String> readme = readmeJavaBlocks().stream().filter(b -> b.stream().anyMatch(l -> l.contains(
                "new BackfillJob("))).findFirst().orElseThrow();
        Map<String, String> replacements = new java.util.LinkedHashMap<>();
        replacements.put("\"localhost:9092\"", "cluster.bootstrapServers()");
        replacements.put("builder(\"orders\")", "builder(\"lib-orders\")");
        replacements.put("\"jdbc:sqlite:orders.db\"", "url");
        replacements.put("BackfillJob.Outcome outcome = ", "outcome = ");
        assertThat(testExample("backfill-cli-it/src/test/java/dev/kbackfill/cli/JobLibraryExampleIT.java"))
                .isEqualTo(replaced(readme, replacements));
    }

    @Test
    void theSparkExampleIsTheCodeSparkEngineITRuns() throws IOException {
        List<String> readme = readmeJavaBlocks().stream().filter(b -> b.stream().anyMatch(l -> l.contains(
                "spark.run(job"))).findFirst().orElseThrow();
        Map<String, String> replacements = new java.util.LinkedHashMap<>();
        replacements.put("builder(\"orders\")", "builder(\"spark-pg\")");
        replacements.put("\"localhost:9092\"", "kafka.bootstrapServers()");
        replacements.put("Target.of(\"jdbc:postgresql://db.internal/app\", \"orders\",", "Target.of(url, \"spark_rows\",");
        replacements.put(".withName(\"orders-on-spark\");", ".withName(\"pg-on-spark\").withBatchRows(100);");
        replacements.put("new SparkLaunch.Options(\"local[2]\", 64, Path.of(\"kbackfill/engine-spark-app/target\")),",
                "options,");
        replacements.put("new PrintWriter(System.out, true), new PrintWriter(System.err, true)",
                "new PrintWriter(launchOut, true), new PrintWriter(launchErr, true)");
        replacements.put("BackfillJob.Outcome outcome = ", "outcome = ");
        assertThat(testExample("engine-spark-app/src/test/java/dev/kbackfill/spark/SparkEngineIT.java"))
                .isEqualTo(replaced(readme, replacements));
    }

    @Test
    void theVerifyExampleIsTheCodeVerifyLibraryExampleITRuns() throws IOException {
        List<String> readme = readmeJavaBlocks().stream().filter(b -> b.stream().anyMatch(l -> l.contains(
                "verification.verify(plan, sink)"))).findFirst().orElseThrow();
        assertThat(testExample("backfill-cli-it/src/test/java/dev/kbackfill/cli/VerifyLibraryExampleIT.java"))
                .isEqualTo(replaced(readme, Map.of("VerifyReport report = ", "report = ")));
    }
}
