package dev.kbackfill.core.read.archive;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;

/**
 * The files of an archive: listed once, opened by name. A local folder ({@link #local}) or an object store, whose
 * implementation a module with the store's client provides ({@link Provider}, found through
 * {@link java.util.ServiceLoader}).
 */
public interface ArchiveStore {

    /** Where the archive is, as the user named it. */
    String location();

    /** Every file under the archive's root, as paths relative to it with {@code /} between names, sorted. */
    List<String> list() throws IOException;

    /** Reads one file of {@link #list()}. */
    InputStream open(String path) throws IOException;

    /** The file as a local path, where the archive is a local folder (a reader that needs random access uses it). */
    default java.util.Optional<java.nio.file.Path> localFile(String path) {
        return java.util.Optional.empty();
    }

    /** A folder on the local disk ({@code /archive} or {@code file:///archive}). */
    static ArchiveStore local(String location) {
        return new LocalArchiveStore(location);
    }

    /** Opens archives of the URL schemes it serves ({@code s3a}). */
    interface Provider {
        boolean serves(String scheme);

        /** @param settings the request's reader settings (the filesystem's, e.g. {@code fs.s3a.endpoint}) */
        ArchiveStore open(String location, java.util.Map<String, String> settings);
    }

    /** The rows of one file, in order, read one at a time. */
    interface Rows extends java.util.Iterator<Object>, java.io.Closeable {
    }

    /**
     * Reads Parquet files of an archive as Avro records (found through {@link java.util.ServiceLoader}: Parquet needs
     * random access and a Parquet library, which a module with a filesystem brings).
     */
    interface ParquetReader {
        /** The rows of {@code path}, a file of {@code store}, as Avro records. */
        Rows rows(ArchiveStore store, String path) throws IOException;
    }
}
