package dev.kbackfill.testsink;

import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.core.version.Version;

/**
 * The file of a {@code rowsfile:} sink: rows by key and jobs' states, read whole and replaced whole by a rename, so
 * that what one save holds is stored together or not at all.
 */
final class RowsFile {

    /** One key's row: its values, or its delete, with the version of the record that wrote it. */
    record Row(LinkedHashMap<String, Object> key, LinkedHashMap<String, Object> values, String topic, int partition,
               long offset, long timestamp, long logTime, boolean deleted) implements Serializable {

        Version version() {
            return new Version(topic, partition, offset, timestamp, logTime);
        }
    }

    /** What the file holds. */
    static final class Contents implements Serializable {
        /** Rows by the text of their key (its fields in order). */
        final Map<String, Row> rows = new LinkedHashMap<>();
        /** Jobs' states in {@link dev.kbackfill.core.sink.JobStateJson}. */
        final Map<String, String> jobs = new TreeMap<>();
    }

    private final Path path;

    RowsFile(Path path) {
        this.path = path;
    }

    Path path() {
        return path;
    }

    boolean exists() {
        return Files.exists(path);
    }

    Contents read() {
        if (!exists()) {
            return new Contents();
        }
        try (InputStream in = Files.newInputStream(path); ObjectInputStream objects = new ObjectInputStream(in)) {
            return (Contents) objects.readObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path, e);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("cannot read " + path, e);
        }
    }

    /** Replaces the file with {@code contents}: all of it, or (a crash before the rename) nothing. */
    void save(Contents contents) {
        Path next = path.resolveSibling(path.getFileName() + ".next");
        try {
            try (OutputStream out = Files.newOutputStream(next); ObjectOutputStream objects = new ObjectOutputStream(out)) {
                objects.writeObject(contents);
            }
            Files.move(next, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + path, e);
        }
    }

    /** The text a key is stored under: its fields and values in order. */
    static String keyText(Map<String, Object> key) {
        return key.toString();
    }
}
