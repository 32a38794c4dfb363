package dev.kbackfill.sink.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

import org.sqlite.SQLiteJDBCLoader;
import org.sqlite.util.LibraryLoaderUtil;

/**
 * SQLite's native library, kept once per user and driver version. The driver extracts its library from its jar into
 * the temporary directory on every start (a random name, the copy compared with the jar's byte by byte, then
 * loaded): about 50 ms of CPU of a 1,000-record run, on two cores. Pointed at a copy ({@code org.sqlite.lib.path},
 * the driver's own setting) it loads that instead. The copy is loaded here first: one that does not load (a home
 * mounted {@code noexec}) is left out, and the driver extracts as before. A path the user set is left alone.
 */
final class SqliteLibrary {

    private SqliteLibrary() {
    }

    /**
     * Points the driver at the cached copy of its library for this platform, made first where it is missing: under
     * {@code $XDG_CACHE_HOME/kbackfill} (else {@code ~/.cache/kbackfill}). Does nothing where that cannot be done.
     */
    static void useCachedCopy() {
        useCachedCopy(cacheRoot(System.getenv()), System.getProperties(), file -> System.load(file.toString()));
    }

    /**
     * The same, the copies under {@code root}, the driver's settings in {@code properties}, a library loaded by
     * {@code load} (which throws {@link UnsatisfiedLinkError} where it cannot).
     */
    static void useCachedCopy(Path root, Map<Object, Object> properties, java.util.function.Consumer<Path> load) {
        if (root == null || properties.get("org.sqlite.lib.path") != null) {
            return;
        }
        String name = LibraryLoaderUtil.getNativeLibName();
        Path dir = root.resolve("sqlite-jdbc-" + SQLiteJDBCLoader.getVersion() + "-"
                + System.getProperty("os.name").replaceAll("[^A-Za-z0-9]", "") + "-" + System.getProperty("os.arch"));
        try {
            if (!Files.isRegularFile(dir.resolve(name))) {
                URL resource = SQLiteJDBCLoader.class.getResource(LibraryLoaderUtil.getNativeLibResourcePath() + "/"
                        + name);
                if (resource == null) {
                    return; // a platform the driver has no library for: it says so itself
                }
                Files.createDirectories(dir);
                Path part = Files.createTempFile(dir, name, ".part");
                try (InputStream in = resource.openStream()) {
                    Files.copy(in, part, StandardCopyOption.REPLACE_EXISTING);
                    // whole or not at all: another run may be copying too
                    Files.move(part, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE,
                            StandardCopyOption.REPLACE_EXISTING);
                } finally {
                    Files.deleteIfExists(part);
                }
            }
            load.accept(dir.resolve(name));
        } catch (IOException | RuntimeException | UnsatisfiedLinkError e) {
            return; // a cache that cannot be written, or a copy that does not load: the driver extracts as before
        }
        properties.put("org.sqlite.lib.path", dir.toString());
        properties.put("org.sqlite.lib.name", name);
    }

    /** Where the copies are kept: {@code $XDG_CACHE_HOME/kbackfill}, else {@code ~/.cache/kbackfill}; null with neither. */
    static Path cacheRoot(Map<String, String> env) {
        String xdg = env.get("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank()) {
            return Path.of(xdg, "kbackfill");
        }
        String home = System.getProperty("user.home");
        return home == null || home.isBlank() || home.equals("?") ? null : Path.of(home, ".cache", "kbackfill");
    }
}
