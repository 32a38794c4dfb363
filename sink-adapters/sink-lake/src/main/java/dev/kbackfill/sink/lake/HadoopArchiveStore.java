package dev.kbackfill.sink.lake;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.read.archive.ArchiveStore;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * A topic's archive on a Hadoop filesystem ({@code s3a://}, {@code s3://} as S3A, {@code hdfs://}), read with the
 * settings a checkpoint takes ({@code fs.s3a.endpoint}) and credentials from the environment (S3A's default chain).
 */
public record HadoopArchiveStore(String location, FileSystem fs, Path root) implements ArchiveStore {

    /** Registered with {@link java.util.ServiceLoader} for the schemes Hadoop serves besides local files. */
    public static final class Provider implements ArchiveStore.Provider {

        @Override
        public boolean serves(String scheme) {
            return new HadoopCheckpointFiles.Storage().serves(scheme);
        }

        @Override
        public ArchiveStore open(String location, Map<String, String> settings) {
            Path root = new Path(location);
            try {
                return new HadoopArchiveStore(location, root.getFileSystem(HadoopCheckpointFiles.configuration(settings)),
                        root);
            } catch (IOException e) {
                throw new dev.kbackfill.resolver.ResolutionException("cannot open archive " + location + ": "
                        + e.getMessage(), e);
            }
        }
    }

    @Override
    public List<String> list() throws IOException {
        String base = fs.makeQualified(root).toUri().getPath();
        base = base.endsWith("/") ? base : base + "/";
        List<String> files = new ArrayList<>();
        RemoteIterator<LocatedFileStatus> it;
        try {
            it = fs.listFiles(root, true);
        } catch (java.io.FileNotFoundException e) {
            throw new dev.kbackfill.resolver.RequestException("invalid " + dev.kbackfill.resolver.Wording.Term.ARCHIVE
                    + " '" + location + "': no such folder; expected the folder a connector archived the topic to");
        }
        while (it.hasNext()) {
            String path = it.next().getPath().toUri().getPath();
            files.add(path.startsWith(base) ? path.substring(base.length()) : path);
        }
        files.sort(null);
        return files;
    }

    @Override
    public InputStream open(String path) throws IOException {
        return fs.open(new Path(root, path));
    }
}
