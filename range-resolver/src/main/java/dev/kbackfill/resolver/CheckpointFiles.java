package dev.kbackfill.resolver;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The files of a Spark checkpoint directory, wherever they are stored: a local directory here, an object store
 * through a {@link Storage} found on the classpath (kbackfill's lake sinks bring Hadoop's filesystems: {@code s3a://},
 * {@code s3://}, {@code hdfs://}). Names are relative to the checkpoint and separated by {@code /}.
 */
public interface CheckpointFiles {

    /** The checkpoint's location as given, for messages. */
    String location();

    /** Whether the checkpoint directory exists. */
    boolean exists() throws IOException;

    /** The names of the entries directly in {@code dir} (files and directories); empty when it does not exist. */
    List<String> list(String dir) throws IOException;

    /** The bytes of {@code file}; empty when it does not exist. */
    Optional<byte[]> read(String file) throws IOException;

    /** Opens checkpoints on a filesystem other than the local one, found with {@link ServiceLoader}. */
    interface Storage {

        /** Whether this storage reads locations of URI scheme {@code scheme} ({@code s3a}). */
        boolean serves(String scheme);

        /**
         * @param location the checkpoint's URI
         * @param settings the filesystem's settings ({@code fs.s3a.endpoint}); credentials come from the environment
         */
        CheckpointFiles open(String location, Map<String, String> settings);
    }

    /**
     * The checkpoint at {@code location}: a local path (or {@code file:} URI), or a URI that a {@link Storage} on the
     * classpath serves.
     *
     * @throws RequestException for a scheme no storage serves
     */
    static CheckpointFiles open(String location, Map<String, String> settings) {
        Matcher m = Pattern.compile("^([a-zA-Z][a-zA-Z0-9+.-]*):.*").matcher(location);
        if (!m.matches() || m.group(1).length() == 1) {
            return new Local(location, Path.of(location));
        }
        String scheme = m.group(1);
        if (scheme.equalsIgnoreCase("file")) {
            return new Local(location, Path.of(java.net.URI.create(location.replaceFirst("^file:(?!//)", "file://"))));
        }
        // an object store's filesystem is among the libraries a command may start without
        Optional<Storage> storage = OptionalLibraries.orAdded(() -> ServiceLoader.load(Storage.class,
                CheckpointFiles.class.getClassLoader()).stream().map(ServiceLoader.Provider::get)
                .filter(s -> s.serves(scheme)).findFirst());
        if (storage.isPresent()) {
            return storage.get().open(location, settings);
        }
        throw new RequestException("invalid checkpoint location '" + location + "': no filesystem for the scheme '"
                + scheme + ":' here; expected a local path, file:, or s3a://, s3:// and hdfs:// with kbackfill's "
                + "lake sinks on the classpath");
    }

    /** A checkpoint in a local directory. */
    record Local(String location, Path dir) implements CheckpointFiles {

        @Override
        public boolean exists() {
            return Files.isDirectory(dir);
        }

        @Override
        public List<String> list(String name) throws IOException {
            Path d = dir.resolve(name);
            if (!Files.isDirectory(d)) {
                return List.of();
            }
            try (Stream<Path> entries = Files.list(d)) {
                return entries.map(p -> p.getFileName().toString()).sorted().toList();
            }
        }

        @Override
        public Optional<byte[]> read(String name) throws IOException {
            Path f = dir.resolve(name);
            if (!Files.isRegularFile(f)) {
                return Optional.empty();
            }
            try {
                return Optional.of(Files.readAllBytes(f));
            } catch (NoSuchFileException e) {
                return Optional.empty();
            }
        }
    }
}
