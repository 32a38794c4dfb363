package dev.kbackfill.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * A file replaced whole: its content written to a hidden temporary file beside it, then moved into place, so a reader
 * (a cron job's next run, node_exporter's textfile collector, a browser) sees the old file or the new one, never half.
 */
final class AtomicFile {

    private AtomicFile() {
    }

    /** Replaces {@code file} with {@code content} (UTF-8); the temporary file is removed when this fails. */
    static void replace(Path file, String content) throws IOException {
        Path target = file.toAbsolutePath();
        // hidden and not named *.prom: node_exporter and directory listings skip it
        Path tmp = Files.createTempFile(target.getParent(), "." + target.getFileName(), ".tmp");
        try {
            Files.writeString(tmp, content, StandardCharsets.UTF_8);
            readableAsBefore(tmp, target);
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * Gives the temporary file the permissions of the file it replaces, or {@code rw-r--r--} for a new one, as a file
     * written in place would have (a temporary file starts owner-only): node_exporter, a browser or a colleague reads it.
     */
    private static void readableAsBefore(Path tmp, Path target) throws IOException {
        if (!Files.getFileStore(tmp).supportsFileAttributeView(java.nio.file.attribute.PosixFileAttributeView.class)) {
            return;
        }
        Files.setPosixFilePermissions(tmp, Files.exists(target) ? Files.getPosixFilePermissions(target)
                : java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    }

    /** Refuses, as bad input, a {@code file} to write that is a directory or lies in a directory not writable. */
    static void checkWritable(picocli.CommandLine cmd, String option, Path file) {
        if (file == null) {
            return;
        }
        Path dir = file.toAbsolutePath().getParent();
        if (Files.isDirectory(file) || !Files.isDirectory(dir) || !Files.isWritable(dir)) {
            throw new picocli.CommandLine.ParameterException(cmd, "invalid " + option + " '" + file + "': "
                    + (Files.isDirectory(file) ? "it is a directory" : "directory " + dir
                    + " does not exist or is not writable") + "; expected a file path in a writable directory");
        }
    }
}
