package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.local.LocalFs;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalLakeFileSystemTest {

    @TempDir
    java.nio.file.Path dir;

    private static FileSystem open(Configuration conf) throws Exception {
        return FileSystem.newInstance(URI.create("file:///"), conf);
    }

    private static String written(FileSystem fs, java.nio.file.Path file) throws Exception {
        try (FSDataOutputStream out = fs.create(new Path(file.toUri()))) {
            out.write(1);
        }
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(file));
    }

    @Test
    void filesAndDirectoriesGetThePermissionsHadoopsLocalFilesystemGives() throws Exception {
        for (String umask : new String[] {"022", "027", "077"}) {
            Configuration plain = new Configuration();
            plain.set("fs.permissions.umask-mode", umask);
            plain.set("fs.file.impl.disable.cache", "true");
            Configuration ours = new Configuration(plain);
            LocalLakeFileSystem.use(ours);
            try (FileSystem hadoops = open(plain); FileSystem lake = open(ours)) {
                assertThat(hadoops).isInstanceOf(LocalFileSystem.class).isNotInstanceOf(LocalLakeFileSystem.class);
                assertThat(lake).isInstanceOf(LocalLakeFileSystem.class);
                assertThat(written(lake, dir.resolve("lake-" + umask))).as("umask " + umask)
                        .isEqualTo(written(hadoops, dir.resolve("hadoop-" + umask)));
                // the checksum file beside it, as Hadoop writes it
                assertThat(dir.resolve(".lake-" + umask + ".crc")).exists();
                lake.mkdirs(new Path(dir.resolve("d-lake-" + umask).toUri()), new FsPermission((short) 0750));
                hadoops.mkdirs(new Path(dir.resolve("d-hadoop-" + umask).toUri()), new FsPermission((short) 0750));
                assertThat(Files.getPosixFilePermissions(dir.resolve("d-lake-" + umask)))
                        .isEqualTo(Files.getPosixFilePermissions(dir.resolve("d-hadoop-" + umask)));
            }
        }
    }

    @Test
    void fileContextWritesAsHadoopsLocalFsDoesWithPermissionsSetInTheJvm() throws Exception {
        for (String umask : new String[] {"022", "077"}) {
            Configuration plain = new Configuration();
            plain.set("fs.permissions.umask-mode", umask);
            Configuration ours = new Configuration(plain);
            LocalLakeFileSystem.use(ours);
            FileContext hadoops = FileContext.getFileContext(URI.create("file:///"), plain);
            FileContext lake = FileContext.getFileContext(URI.create("file:///"), ours);
            assertThat(hadoops.getDefaultFileSystem()).isInstanceOf(LocalFs.class);
            assertThat(lake.getDefaultFileSystem()).isInstanceOf(LocalLakeFileSystem.Fs.class);
            // as Delta's log store writes a commit: a new file, never over an existing one, then renamed
            for (FileContext fc : List.of(hadoops, lake)) {
                String name = (fc == lake ? "lake-" : "hadoop-") + umask;
                Path temp = new Path(dir.resolve("." + name + ".tmp").toUri());
                try (FSDataOutputStream out = fc.create(temp, EnumSet.of(CreateFlag.CREATE),
                        Options.CreateOpts.checksumParam(Options.ChecksumOpt.createDisabled()))) {
                    out.write(new byte[] {1, 2, 3});
                }
                fc.rename(temp, new Path(dir.resolve(name).toUri()));
                assertThat(fc.getFileStatus(new Path(dir.resolve(name).toUri())).getLen()).isEqualTo(3);
            }
            assertThat(Files.getPosixFilePermissions(dir.resolve("lake-" + umask))).as("umask " + umask)
                    .isEqualTo(Files.getPosixFilePermissions(dir.resolve("hadoop-" + umask)));
            assertThat(Files.exists(dir.resolve(".lake-" + umask + ".crc")))
                    .isEqualTo(Files.exists(dir.resolve(".hadoop-" + umask + ".crc")));
            assertThat(Files.readAllBytes(dir.resolve("lake-" + umask))).containsExactly(1, 2, 3);
            // a file that exists is not created again
            Path again = new Path(dir.resolve("lake-" + umask).toUri());
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> lake.create(again, EnumSet.of(CreateFlag.CREATE)).close())
                    .isInstanceOf(org.apache.hadoop.fs.FileAlreadyExistsException.class);
        }
    }

    private static String linkStatus(FileSystem fs, Path p) {
        try {
            return fs.getFileLinkStatus(p).toString();
        } catch (Exception e) {
            return e.getClass().getName();
        }
    }

    @Test
    void aPathsLinkStatusIsHadoopsForFilesLinksDanglingLinksAndMissingPaths() throws Exception {
        Files.writeString(dir.resolve("file"), "x");
        Files.createDirectory(dir.resolve("directory"));
        Files.createSymbolicLink(dir.resolve("link"), dir.resolve("file"));
        Files.createSymbolicLink(dir.resolve("relative"), java.nio.file.Path.of("file"));
        Files.createSymbolicLink(dir.resolve("dangling"), dir.resolve("gone"));
        Configuration conf = new Configuration();
        org.apache.hadoop.fs.RawLocalFileSystem hadoops = new org.apache.hadoop.fs.RawLocalFileSystem();
        hadoops.initialize(URI.create("file:///"), conf);
        LocalLakeFileSystem.Raw lake = new LocalLakeFileSystem.Raw();
        lake.initialize(URI.create("file:///"), conf);
        for (String name : List.of("file", "directory", "link", "relative", "dangling")) {
            for (Path p : List.of(new Path(dir.resolve(name).toUri()), new Path(dir.resolve(name).toString()))) {
                // Hadoop reads the link at the path's text, scheme included: a dangling link named by its URI is
                // not found, as a missing file is
                assertThat(linkStatus(lake, p)).as(p.toString()).isEqualTo(linkStatus(hadoops, p));
            }
        }
        Path missing = new Path(dir.resolve("missing").toUri());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> lake.getFileLinkStatus(missing))
                .isInstanceOf(java.io.FileNotFoundException.class);
    }

    @Test
    void theNineBitsOfAModeAreItsJavaPermissions() {
        for (int mode = 0; mode < 512; mode++) {
            String rwx = PosixFilePermissions.toString(LocalLakeFileSystem.Raw.posix(mode));
            assertThat(rwx).isEqualTo(new FsPermission((short) mode).toString());
        }
    }

    @Test
    void aFilesystemTheSettingsNameIsKept() {
        Configuration conf = new Configuration();
        conf.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem");
        LocalLakeFileSystem.use(conf);
        assertThat(conf.get("fs.file.impl")).isEqualTo("org.apache.hadoop.fs.RawLocalFileSystem");
        Configuration unset = new Configuration();
        LocalLakeFileSystem.use(unset);
        assertThat(unset.get("fs.file.impl")).isEqualTo(LocalLakeFileSystem.class.getName());
    }
}
