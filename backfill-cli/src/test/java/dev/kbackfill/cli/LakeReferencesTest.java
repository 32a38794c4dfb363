package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The command line's classes name no class of the lake libraries, which it builds against (provided scope) but
 * starts most commands without: a reference would fail only at run time, in a command for a database or Kafka. The
 * demo's broker is the one exception, used by DemoCommand after it has the libraries added and by the AOT
 * training's broker in the JVM; the sinks are found by their factories.
 */
class LakeReferencesTest {

    private static final List<String> LAKE = List.of("dev/kbackfill/sink/delta/", "dev/kbackfill/sink/iceberg/",
            "dev/kbackfill/sink/lake/", "dev/kbackfill/embedded/", "org/apache/hadoop/", "org/apache/parquet/",
            "io/delta/", "org/apache/iceberg/", "kafka/server/", "scala/");

    @Test
    void noClassOfTheCommandLineButTheDemosNamesALakeLibrarysClass() throws Exception {
        Path classes = Path.of(LakeLibraries.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Map<String, String> named = new TreeMap<>();
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".class")).toList()) {
                // class names stand in the constant pool as modified UTF-8, ASCII here
                String text = new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1);
                LAKE.stream().filter(text::contains).findFirst()
                        .ifPresent(p -> named.put(classes.relativize(f).toString(), p));
            }
        }
        // LakeLibraries names two of their class files as resources, to tell whether they are on the class path
        assertThat(named).as("classes naming a lake library's").containsOnly(
                Map.entry("dev/kbackfill/cli/DemoCommand.class", "dev/kbackfill/embedded/"),
                Map.entry("dev/kbackfill/cli/AotTraining.class", "dev/kbackfill/embedded/"),
                Map.entry("dev/kbackfill/cli/LakeLibraries.class", "dev/kbackfill/sink/lake/"));
    }
}
