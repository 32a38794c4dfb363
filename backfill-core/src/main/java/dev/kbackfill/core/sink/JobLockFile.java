package dev.kbackfill.core.sink;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A job's run lock as an OS file lock, for sinks on a local filesystem (SQLite files, local Delta tables): the
 * operating system releases it when the process dies, so a run killed with SIGKILL never leaves a stale lock.
 */
public final class JobLockFile {

    private JobLockFile() {
    }

    /** The lock file for a job beside {@code target}: {@code .NAME.kbackfill-JOB.lock} in its directory. */
    public static Path beside(Path target, String job) {
        return target.resolveSibling("." + target.getFileName() + ".kbackfill-" + job.replaceAll("[^A-Za-z0-9._-]", "_")
                + ".lock");
    }

    /**
     * Takes the lock without waiting.
     *
     * @param what the destination, for the message
     * @throws JobConflictException if another run (in this or another process) holds it
     */
    public static AutoCloseable acquire(Path lockFile, String job, String what) {
        try {
            Files.createDirectories(lockFile.toAbsolutePath().getParent());
            FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                channel.close();
                throw new JobConflictException("job '" + job + "' is already running against " + what + " (lock "
                        + lockFile + " is held); wait for it to finish before starting it again");
            }
            FileLock held = lock;
            return () -> {
                held.release();
                channel.close();
            };
        } catch (IOException e) {
            throw new SinkException("cannot lock job " + job + " with " + lockFile + ": " + e.getMessage(), e);
        }
    }
}
