package dev.kbackfill.sink.lake;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.io.nativeio.NativeIO;

/**
 * The local filesystem as the lake sinks write it: Hadoop's checksummed local filesystem, except that a file's
 * permissions are set with {@code java.nio} rather than by a {@code chmod} process. Without Hadoop's native library
 * (kbackfill ships none) Hadoop starts a process for every file and checksum file it creates: a 1% touch of a
 * 10M-row Iceberg table forked 160 of them, one after another, for its 80 delete files. With the native library
 * present, Hadoop's own call is used.
 */
public final class LocalLakeFileSystem extends LocalFileSystem {

    private static final String KEY = "fs.file.impl";

    public LocalLakeFileSystem() {
        super(new Raw());
    }

    /** Makes {@code file:} paths of {@code conf} this filesystem, unless the settings name another. */
    public static void use(Configuration conf) {
        if (conf.get(KEY) == null || conf.get(KEY).equals(LocalFileSystem.class.getName())) {
            conf.set(KEY, LocalLakeFileSystem.class.getName());
        }
    }

    /** Hadoop's raw local filesystem with permissions set in the JVM. */
    static final class Raw extends RawLocalFileSystem {
        @Override
        public void setPermission(Path p, FsPermission permission) throws IOException {
            if (NativeIO.isAvailable()) {
                super.setPermission(p, permission);
                return;
            }
            try {
                Files.setPosixFilePermissions(pathToFile(p).toPath(), posix(permission.toShort()));
            } catch (UnsupportedOperationException e) {
                super.setPermission(p, permission); // not a POSIX filesystem: Hadoop's way
            }
        }

        /** The nine permission bits of {@code mode} (Hadoop's sticky bit has no java.nio counterpart). */
        static Set<PosixFilePermission> posix(int mode) {
            Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
            PosixFilePermission[] bits = {
                PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
                PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
                PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ};
            for (int i = 0; i < bits.length; i++) {
                if ((mode & (1 << i)) != 0) {
                    set.add(bits[i]);
                }
            }
            return set;
        }
    }
}
