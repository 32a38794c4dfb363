package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When the command line adds the lake libraries (kbackfill-lake.jar) to its class path, and when not. */
class LakeLibrariesTest {

    @Test
    void theLakeJarIsOnTheClassPathAsGivenOrAsTheSameFileByAnotherPath(@TempDir Path dir) throws Exception {
        Path lake = Files.createFile(dir.resolve("kbackfill-lake.jar"));
        Path jar = Files.createFile(dir.resolve("kbackfill.jar"));
        Files.createDirectories(dir.resolve("bin"));
        String sep = java.io.File.pathSeparator;
        assertThat(LakeLibraries.onClassPath(lake, jar + sep + lake)).isTrue();
        assertThat(LakeLibraries.onClassPath(lake, dir.resolve("bin/../kbackfill-lake.jar") + sep + jar)).isTrue();
        Path link = Files.createSymbolicLink(dir.resolve("link.jar"), lake);
        assertThat(LakeLibraries.onClassPath(lake, link.toString())).isTrue();
        assertThat(LakeLibraries.onClassPath(lake, jar.toString())).isFalse();
        assertThat(LakeLibraries.onClassPath(lake, "")).isFalse();
        assertThat(LakeLibraries.onClassPath(lake, sep + "lib/*" + sep + "\u0000bad")).isFalse();
    }

    @Test
    void classesOutsideAJarAddNothing() {
        // these tests' classes are in a directory (as the image's are): whatever is there is the class path
        LakeLibraries.add();
        LakeLibraries.add();
    }
}
