package dev.kbackfill.core.version;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The order of versions is the bottom layer of core: records, sinks, runs and verification use it, and it uses none
 * of them (records and versions once imported each other). Read from the sources, comments aside.
 */
class VersionLayerTest {

    private static final Pattern CORE_PACKAGE = Pattern.compile("dev\\.kbackfill\\.core\\.(\\w+)\\.");

    @Test
    void theVersionPackageUsesNoOtherPackageOfCore() throws IOException {
        Path version = Path.of("src/main/java/dev/kbackfill/core/version");
        assertThat(version).isDirectory();
        TreeSet<String> used = new TreeSet<>();
        List<Path> sources;
        try (Stream<Path> files = Files.list(version)) {
            sources = files.filter(f -> f.toString().endsWith(".java")).toList();
        }
        assertThat(sources).isNotEmpty();
        for (Path source : sources) {
            String code = Files.readString(source).replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\n]*", "");
            Matcher m = CORE_PACKAGE.matcher(code);
            while (m.find()) {
                if (!m.group(1).equals("version")) {
                    used.add(source.getFileName() + " uses core." + m.group(1));
                }
            }
        }
        assertThat(used).isEmpty();
    }
}
