package dev.kbackfill.sink.delta;

import dev.kbackfill.sink.lake.ConditionalWrites;
import dev.kbackfill.sink.lake.ObjectStoreLease;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;

import io.delta.storage.HadoopFileSystemLogStore;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The Delta log on S3 for writers in any number of processes: a commit file is created with a conditional put
 * ({@code If-None-Match: *}), so of two writers that commit the same version one is refused, as Delta's protocol
 * requires ({@code FileAlreadyExistsException}, which Kernel reports as a conflict). Delta's own
 * {@code S3SingleDriverLogStore}, what Kernel takes for {@code s3a://} by default, checks that the file is absent
 * and then writes it, under a lock held in one JVM only: two processes that commit the same version between the
 * check and the write both succeed and one commit is lost (it also needs Guava, which Kernel does not bring). On S3
 * the conditional put closes that window: S3 decides which of two such writes wins. Reading and listing are Hadoop's.
 *
 * <p>Registered for the {@code s3a} and {@code s3} schemes by {@link DeltaFiles#hadoopConfiguration}; the store
 * must honour conditional writes, which {@link ObjectStoreLease} checks before a job writes.
 */
public final class ConditionalPutLogStore extends HadoopFileSystemLogStore {

    public ConditionalPutLogStore(Configuration conf) {
        super(conf);
    }

    @Override
    public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration conf) throws IOException {
        StringBuilder text = new StringBuilder();
        actions.forEachRemaining(a -> text.append(a).append('\n'));
        byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
        FileSystem fs = path.getFileSystem(conf);
        if (overwrite) {
            try (var out = fs.create(path, true)) { // checkpoint pointers: the last writer wins, by design
                out.write(bytes);
            }
            return;
        }
        if (!ConditionalWrites.createIfAbsent(fs, path, bytes)) {
            throw new java.nio.file.FileAlreadyExistsException(path.toString());
        }
    }

    @Override
    public Boolean isPartialWriteVisible(Path path, Configuration conf) {
        return false; // an S3 PUT is visible whole or not at all
    }
}
