package dev.kbackfill.sink.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteLibraryTest {

    @TempDir
    Path root;

    /** The first run copies the driver's library for this platform; the next ones load that copy, not a new one. */
    @Test
    void theLibraryIsCopiedOnceAndTheDriverPointedAtTheCopy() throws Exception {
        List<Path> loaded = new ArrayList<>();
        Map<Object, Object> first = new HashMap<>();
        SqliteLibrary.useCachedCopy(root, first, loaded::add);
        Path copy = Path.of((String) first.get("org.sqlite.lib.path"), (String) first.get("org.sqlite.lib.name"));
        assertThat(copy).startsWith(root).isRegularFile();
        assertThat(Files.size(copy)).isEqualTo(org.sqlite.SQLiteJDBCLoader.class.getResource(
                org.sqlite.util.LibraryLoaderUtil.getNativeLibResourcePath() + "/" + copy.getFileName())
                .openConnection().getContentLengthLong());
        Files.setLastModifiedTime(copy, FileTime.fromMillis(0));
        Map<Object, Object> next = new HashMap<>();
        SqliteLibrary.useCachedCopy(root, next, loaded::add);
        assertThat(next).isEqualTo(first);
        assertThat(Files.getLastModifiedTime(copy).toMillis()).as("not copied again").isZero();
        assertThat(loaded).containsExactly(copy, copy);
        try (var files = Files.list(copy.getParent())) {
            assertThat(files).as("no part left behind").containsExactly(copy);
        }
    }

    /** A copy that does not load (a home mounted noexec), or a cache that cannot be written: the driver extracts. */
    @Test
    void aCopyThatDoesNotLoadOrCannotBeMadeLeavesTheDriverToExtractItsOwn() throws Exception {
        Map<Object, Object> settings = new HashMap<>();
        SqliteLibrary.useCachedCopy(root, settings, file -> {
            throw new UnsatisfiedLinkError("failed to map segment from shared object");
        });
        assertThat(settings).isEmpty();
        Path notADirectory = Files.writeString(root.resolve("file"), "x");
        SqliteLibrary.useCachedCopy(notADirectory, settings, file -> { });
        assertThat(settings).isEmpty();
    }

    @Test
    void aLibraryPathTheUserSetIsLeftAlone() {
        Map<Object, Object> settings = new HashMap<>(Map.of("org.sqlite.lib.path", "/opt/sqlite"));
        SqliteLibrary.useCachedCopy(root, settings, file -> { });
        assertThat(settings).containsOnly(Map.entry("org.sqlite.lib.path", "/opt/sqlite"));
        assertThat(root).isEmptyDirectory();
    }

    @Test
    void theCacheIsUnderXdgCacheHomeElseTheHomesCache() {
        assertThat(SqliteLibrary.cacheRoot(Map.of("XDG_CACHE_HOME", "/var/cache/me"))).isEqualTo(Path.of("/var/cache/me/kbackfill"));
        assertThat(SqliteLibrary.cacheRoot(Map.of())).isEqualTo(Path.of(System.getProperty("user.home"), ".cache", "kbackfill"));
    }
}
