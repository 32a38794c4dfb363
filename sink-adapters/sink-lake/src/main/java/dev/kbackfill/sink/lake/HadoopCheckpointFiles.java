package dev.kbackfill.sink.lake;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.resolver.CheckpointFiles;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A Spark checkpoint on a Hadoop filesystem ({@code s3a://}, {@code s3://} as S3A the way Spark on EMR and Databricks
 * spell it, {@code hdfs://}), read with the settings a lake sink takes ({@code fs.s3a.endpoint},
 * {@code fs.s3a.path.style.access}) and credentials from the environment (S3A's default chain).
 */
public record HadoopCheckpointFiles(String location, FileSystem fs, Path dir) implements CheckpointFiles {

    /** Registered with {@link java.util.ServiceLoader} for the schemes Hadoop serves besides local files. */
    public static final class Storage implements CheckpointFiles.Storage {

        @Override
        public boolean serves(String scheme) {
            try {
                FileSystem.getFileSystemClass(scheme, configuration(Map.of()));
                return true;
            } catch (IOException e) {
                return false;
            }
        }

        @Override
        public CheckpointFiles open(String location, Map<String, String> settings) {
            Path dir = new Path(location);
            try {
                return new HadoopCheckpointFiles(location, dir.getFileSystem(configuration(settings)), dir);
            } catch (IOException e) {
                throw new dev.kbackfill.resolver.ResolutionException("cannot open checkpoint " + location + ": "
                        + e.getMessage(), e);
            }
        }
    }

    static Configuration configuration(Map<String, String> settings) {
        Configuration conf = new Configuration();
        settings.forEach(conf::set);
        FileSystemSchemes.s3AsS3a(conf);
        return conf;
    }

    @Override
    public boolean exists() throws IOException {
        try {
            return fs.getFileStatus(dir).isDirectory();
        } catch (FileNotFoundException e) {
            return false;
        }
    }

    @Override
    public List<String> list(String name) throws IOException {
        try {
            return Arrays.stream(fs.listStatus(new Path(dir, name))).map(FileStatus::getPath).map(Path::getName)
                    .sorted().toList();
        } catch (FileNotFoundException e) {
            return List.of();
        }
    }

    @Override
    public Optional<byte[]> read(String name) throws IOException {
        try (InputStream in = fs.open(new Path(dir, name))) {
            return Optional.of(in.readAllBytes());
        } catch (FileNotFoundException e) {
            return Optional.empty();
        }
    }
}
