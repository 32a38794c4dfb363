package dev.kbackfill.sink.lake;

import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;

import org.apache.hadoop.fs.EtagSource;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Writes an object store makes atomic, through Hadoop's S3A filesystem: create an object only if no object has its
 * key ({@code If-None-Match: *}), replace one only if it is still the version read ({@code If-Match: ETAG}). S3,
 * and the S3 APIs that follow it, refuse the losing request with 412 (or 409 while another write of the key is in
 * flight) however many writers race, which is what makes a commit to a Delta log on S3 a compare-and-set.
 */
public final class ConditionalWrites {

    /** S3A's createFile option for put-if-absent. */
    public static final String IF_ABSENT = "fs.option.create.conditional.overwrite";
    /** S3A's createFile option for replace-if-unchanged; its value is the ETag. */
    public static final String IF_MATCH = "fs.option.create.conditional.overwrite.etag";

    /** The class of Hadoop's S3A filesystem, whatever scheme maps to it. */
    public static final String S3A = "org.apache.hadoop.fs.s3a.S3AFileSystem";

    private ConditionalWrites() {
    }

    /** Whether {@code fs} is S3A, the filesystem these writes are for. */
    public static boolean isS3a(FileSystem fs) {
        return fs.getClass().getName().equals(S3A);
    }

    /** An object's bytes and the ETag of that version. */
    public record Stamped(byte[] bytes, String etag) {
    }

    /**
     * Writes {@code bytes} at {@code path} if no object is there.
     *
     * @return false if an object was there (or another write of it won the race)
     */
    public static boolean createIfAbsent(FileSystem fs, Path path, byte[] bytes) throws IOException {
        FSDataOutputStreamBuilder<?, ?> builder = fs.createFile(path);
        builder.overwrite(false);
        builder.must(IF_ABSENT, true); // no existence check of S3A's own: the PUT's condition is the check
        return write(builder, bytes);
    }

    /**
     * Replaces the object at {@code path} with {@code bytes} if it is still the version {@code etag}.
     *
     * @return false if it changed (or is gone)
     */
    public static boolean replaceIfUnchanged(FileSystem fs, Path path, String etag, byte[] bytes) throws IOException {
        FSDataOutputStreamBuilder<?, ?> builder = fs.createFile(path);
        builder.overwrite(true);
        builder.must(IF_MATCH, etag);
        return write(builder, bytes);
    }

    private static boolean write(FSDataOutputStreamBuilder<?, ?> builder, byte[] bytes) throws IOException {
        try (FSDataOutputStream out = builder.build()) {
            out.write(bytes);
        } catch (IOException e) {
            if (refused(e)) {
                return false;
            }
            throw e;
        }
        return true;
    }

    /** The object at {@code path} with its ETag, if there is one. */
    public static Optional<Stamped> read(FileSystem fs, Path path) throws IOException {
        FileStatus status;
        try {
            status = fs.getFileStatus(path);
        } catch (java.io.FileNotFoundException e) {
            return Optional.empty();
        }
        String etag = status instanceof EtagSource s ? s.getEtag() : null;
        if (etag == null) {
            throw new IOException(fs.getUri() + " gives no ETag for " + path + ": conditional writes need one");
        }
        // opened with the status read, S3A fails the read if the object changed since (its ETag change detection)
        try (InputStream in = fs.openFile(path).withFileStatus(status).build().get()) {
            return Optional.of(new Stamped(in.readAllBytes(), etag));
        } catch (java.io.FileNotFoundException e) {
            return Optional.empty();
        } catch (IOException e) {
            if (refused(e)) {
                return Optional.empty(); // changed while read: as good as gone to the caller, who reads again
            }
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted reading " + path);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        }
    }

    /**
     * Whether a failed write was refused by its condition: S3A reports a 412 as RemoteFileChangedException, a 409
     * (a concurrent write of the key in flight) as an AWSS3IOException naming ConditionalRequestConflict.
     */
    public static boolean refused(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String name = t.getClass().getSimpleName();
            String message = String.valueOf(t.getMessage());
            if (name.equals("RemoteFileChangedException") || t instanceof org.apache.hadoop.fs.FileAlreadyExistsException
                    || t instanceof java.nio.file.FileAlreadyExistsException
                    || message.contains("PreconditionFailed") || message.contains("ConditionalRequestConflict")
                    || message.contains("Status Code: 412") || message.contains("Status Code: 409")) {
                return true;
            }
        }
        return false;
    }
}
