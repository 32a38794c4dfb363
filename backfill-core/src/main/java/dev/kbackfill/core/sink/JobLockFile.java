package dev.kbackfill.core.sink;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A job's run lock as an OS file lock, for sinks on a local filesystem (SQLite files, local Delta tables): the
 * operating system releases it when the process dies, so a run killed with SIGKILL never leaves a stale lock.
 *
 * <p>The file is deleted when the lock is released (a killed run leaves it behind, harmlessly: the next run takes
 * it). A run that locked a file another run deleted meanwhile sees that the path no longer names the file it locked
 * and tries again, so two runs never hold locks on two different files of the same name.
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
            // folders the lock needs and that do not exist yet (a new table's): removed again on release when
            // nothing else came into them, so a run that fails before its first batch leaves nothing behind
            List<Path> created = new ArrayList<>();
            for (Path d = lockFile.toAbsolutePath().getParent(); d != null && !Files.exists(d); d = d.getParent()) {
                created.add(d);
            }
            for (int attempt = 0; ; attempt++) {
                Files.createDirectories(lockFile.toAbsolutePath().getParent());
                Object before = fileKey(lockFile);
                FileChannel channel;
                try {
                    channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                } catch (java.nio.file.NoSuchFileException e) {
                    if (attempt < 20) {
                        continue; // another run removed the folder it had made, between our making and our open
                    }
                    throw e;
                }
                Object opened = fileKey(lockFile);
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
                Object locked = fileKey(lockFile);
                // the path named one file before the open, after it and once locked: the file this channel holds
                // (an open file's inode is never reused); otherwise the run that held it deleted it meanwhile
                boolean same = (before == null || before.equals(opened)) && opened != null && opened.equals(locked);
                if (!same && attempt < 20) {
                    lock.release();
                    channel.close();
                    continue;
                }
                FileLock held = lock;
                return () -> {
                    try {
                        Files.deleteIfExists(lockFile); // while still held: a run that opened it meanwhile retries
                    } finally {
                        held.release();
                        channel.close();
                        removeIfEmpty(created);
                    }
                };
            }
        } catch (java.nio.file.AccessDeniedException e) {
            throw denied(job, lockFile, e.getFile(), what);
        } catch (java.nio.file.FileSystemException e) {
            if (e.getReason() != null && e.getReason().contains("not permitted")) {
                throw denied(job, lockFile, e.getFile(), what); // EPERM: an immutable folder, a read-only mount
            }
            throw new SinkException("cannot lock job " + job + " with " + lockFile + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new SinkException("cannot lock job " + job + " with " + lockFile + ": " + e.getMessage(), e);
        }
    }

    private static SinkConfigException denied(String job, Path lockFile, String file, String what) {
        return new SinkConfigException("cannot lock job " + job + " with " + lockFile + ": permission denied on "
                + file + " (the lock file lives beside " + what + "; run as a user who may write there)");
    }

    /** Removes {@code folders} (innermost first) while they are empty; stops at the first that is not. */
    private static void removeIfEmpty(List<Path> folders) {
        for (Path d : folders) {
            try {
                Files.deleteIfExists(d);
            } catch (IOException e) {
                return; // not empty (the table was created there, or another run's lock): it stays
            }
        }
    }

    /** The file's identity (device and inode on Linux), or null when it does not exist or has none. */
    private static Object fileKey(Path path) throws IOException {
        try {
            return Files.readAttributes(path, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        } catch (java.nio.file.NoSuchFileException e) {
            return null;
        }
    }
}
