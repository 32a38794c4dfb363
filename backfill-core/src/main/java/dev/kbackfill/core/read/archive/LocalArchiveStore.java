package dev.kbackfill.core.read.archive;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import dev.kbackfill.resolver.RequestException;
import dev.kbackfill.resolver.Wording;

/** An archive in a local folder. */
final class LocalArchiveStore implements ArchiveStore {

    private final String location;
    private final Path root;

    LocalArchiveStore(String location) {
        this.location = location;
        this.root = location.startsWith("file:") ? Path.of(java.net.URI.create(location)) : Path.of(location);
        if (!Files.isDirectory(root)) {
            throw new RequestException("invalid " + Wording.Term.ARCHIVE + " '" + location + "': "
                    + (Files.exists(root) ? "not a folder" : "no such folder") + "; expected the folder (or "
                    + "s3a://BUCKET/PREFIX) a connector archived the topic to");
        }
    }

    @Override
    public String location() {
        return location;
    }

    @Override
    public List<String> list() throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(Files::isRegularFile)
                    .map(f -> root.relativize(f).toString().replace(java.io.File.separatorChar, '/'))
                    .sorted().toList();
        }
    }

    @Override
    public java.util.Optional<Path> localFile(String path) {
        return java.util.Optional.of(root.resolve(path));
    }

    @Override
    public InputStream open(String path) throws IOException {
        return Files.newInputStream(root.resolve(path));
    }
}
