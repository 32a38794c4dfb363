package dev.kbackfill.sink.lake;

import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.kbackfill.core.sink.TableDamagedException;

/**
 * A read of a lake table that failed on one of its files, said in one line: which file (a data file, a delete file, a
 * manifest, a metadata file) and what is wrong with it, missing or cut short (an end of file before its footer, JSON
 * or Avro that stops halfway, a file that is not Parquet). Any other failure (a connection lost, a permission refused)
 * is left as it is, to be retried or reported as such.
 */
public final class LakeDamage {

    private LakeDamage() {
    }

    /** How a lake format names its files and mends them, for {@link #named}: one per format. */
    public record Format(String name, Function<String, String> roleOf, Function<String, String> remedy) {

        /** {@code read}'s result, or its failure named where a file of {@code table} is what is wrong. */
        public <T> T reading(String table, java.util.function.Supplier<T> read) {
            try {
                return read.get();
            } catch (RuntimeException e) {
                throw named(table, e);
            }
        }

        /** {@code e} named where a file of {@code table} is what is wrong ({@link LakeDamage#named}). */
        public RuntimeException named(String table, RuntimeException e) {
            return LakeDamage.named(name + " table " + table, e, roleOf, remedy);
        }
    }

    /** A read of {@code file} that failed, for readers whose own failures do not name the file they read. */
    static final class InFile extends RuntimeException {
        private final String file;
        private final String role;

        InFile(String file, String role, Throwable cause) {
            super("Failed to read " + role + " " + file + ": " + cause, cause);
            this.file = file;
            this.role = role;
        }
    }

    /**
     * A failed read of {@code file}, a {@code role} of its table ("delete file"), as a failure that names it where the
     * file is what is wrong; else {@code e} as it is (an {@link java.io.IOException} unchecked).
     */
    public static RuntimeException inFile(String file, String role, Exception e) {
        if (wrong(e).isEmpty() || e instanceof InFile) {
            return e instanceof RuntimeException r ? r : new java.io.UncheckedIOException(e instanceof java.io.IOException io
                    ? io : new java.io.IOException(e));
        }
        return new InFile(file, role, e);
    }

    /** What is wrong with a file. */
    enum Wrong {
        MISSING("is missing"),
        CUT("is cut short or corrupt");

        final String says;

        Wrong(String says) {
            this.says = says;
        }
    }

    /** A path or URI of a lake file as failures name it, up to its extension. */
    private static final Pattern PATH = Pattern.compile(
            "((?:[A-Za-z][A-Za-z0-9+.-]*:)?/[^\\s,;'\"()\\[\\]{}]+?\\.(?:parquet|avro|orc|json|puffin|bin|crc))(?![A-Za-z0-9])");

    /** Iceberg's message for a version-hint that names a metadata file the table does not have. */
    private static final Pattern MISSING_VERSION = Pattern.compile("Metadata file for version (\\d+) is missing under (\\S+)");

    /**
     * {@code e} as a {@link TableDamagedException} that names the table, the file and what is wrong, and says what
     * mends it; else {@code e} itself.
     *
     * @param table  the table as messages show it
     * @param roleOf what a file is to the table ("data file", "manifest"), from its path
     * @param remedy what mends a missing or broken file of that role
     */
    public static RuntimeException named(String table, RuntimeException e, Function<String, String> roleOf,
                                         Function<String, String> remedy) {
        if (e instanceof dev.kbackfill.core.sink.SinkException) {
            return e; // said already, by the sink in its own words (its state files, a commit that raced)
        }
        Optional<Wrong> wrong = wrong(e);
        if (wrong.isEmpty()) {
            return e;
        }
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            Matcher version = MISSING_VERSION.matcher(String.valueOf(t.getMessage()));
            if (version.find()) {
                return new TableDamagedException(table + ": the metadata file of version " + version.group(1)
                        + " is missing under " + version.group(2) + " (its version hint names it); "
                        + remedy.apply("metadata file"), e);
            }
        }
        Optional<String> file = fileOf(e);
        if (file.isEmpty()) {
            return e;
        }
        String role = inFile(e).map(f -> f.role).orElseGet(() -> roleOf.apply(file.get()));
        String detail = wrong.get() == Wrong.CUT ? " (" + deepest(e) + ")" : "";
        return new TableDamagedException(table + ": " + role + " " + file.get() + " " + wrong.get().says + detail
                + "; " + remedy.apply(role), e);
    }

    private static Optional<InFile> inFile(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof InFile f) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }

    /** The file a failure names: the one an {@link InFile} read, else the first path a message of it names. */
    public static Optional<String> fileOf(Throwable e) {
        Optional<InFile> read = inFile(e);
        if (read.isPresent()) {
            return Optional.of(read.get().file);
        }
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            Matcher m = PATH.matcher(String.valueOf(t.getMessage()));
            if (m.find()) {
                return Optional.of(m.group(1));
            }
        }
        return Optional.empty();
    }

    /** Missing, cut short or corrupt, or (empty) something a file's contents do not explain. */
    static Optional<Wrong> wrong(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String type = t.getClass().getSimpleName();
            String message = String.valueOf(t.getMessage());
            if (t instanceof java.io.FileNotFoundException || t instanceof java.nio.file.NoSuchFileException
                    || type.equals("NotFoundException") || type.equals("FileNotFoundException")
                    || MISSING_VERSION.matcher(message).find()) {
                return Optional.of(Wrong.MISSING);
            }
        }
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String type = t.getClass().getSimpleName();
            String message = String.valueOf(t.getMessage());
            if (t instanceof java.io.EOFException || type.equals("JsonEOFException") || type.equals("JsonParseException")
                    || type.equals("MismatchedInputException") || type.equals("InvalidAvroMagicException")
                    || type.equals("ParquetDecodingException") || message.contains("is not a Parquet file")
                    || message.startsWith("footer is too large")
                    || type.equals("ChecksumException") || message.contains("Checksum error") || message.contains("Expected magic number")
                    || message.contains("Not an Avro data file") || message.contains("Invalid sync")) {
                return Optional.of(Wrong.CUT);
            }
        }
        return Optional.empty();
    }

    /** The innermost cause, as its type and message. */
    private static String deepest(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String message = t.getMessage() == null ? "" : ": " + t.getMessage().lines().findFirst().orElse("");
        return t.getClass().getSimpleName() + message;
    }
}
