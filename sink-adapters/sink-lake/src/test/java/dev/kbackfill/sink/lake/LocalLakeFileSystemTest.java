package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
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
