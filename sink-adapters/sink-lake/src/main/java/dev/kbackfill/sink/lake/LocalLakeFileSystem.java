package dev.kbackfill.sink.lake;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.FSLinkResolver;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FsConstants;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.local.LocalConfigKeys;
import org.apache.hadoop.fs.local.LocalFs;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.io.nativeio.NativeIO;

/**
 * The local filesystem as the lake sinks write it: Hadoop's checksummed local filesystem, except that a file's
 * permissions are set with {@code java.nio} rather than by a {@code chmod} process. Without Hadoop's native library
 * (kbackfill ships none) Hadoop starts a process for every file and checksum file it creates: a 1% touch of a
 * 10M-row Iceberg table forked 160 of them, one after another, for its 80 delete files. With the native library
 * present, Hadoop's own call is used. The same holds for {@code FileContext}, through which Delta's log store writes
 * each commit's log file and its checksum ({@link Fs}).
 */
public final class LocalLakeFileSystem extends LocalFileSystem {

    private static final String KEY = "fs.file.impl";
    private static final String CONTEXT_KEY = "fs.AbstractFileSystem.file.impl";

    public LocalLakeFileSystem() {
        super(new Raw());
    }

    /**
     * Makes {@code file:} paths of {@code conf} this filesystem, and {@link Fs} for {@code FileContext}, unless the
     * settings name others.
     */
    public static void use(Configuration conf) {
        if (conf.get(KEY) == null || conf.get(KEY).equals(LocalFileSystem.class.getName())) {
            conf.set(KEY, LocalLakeFileSystem.class.getName());
        }
        if (conf.get(CONTEXT_KEY) == null || conf.get(CONTEXT_KEY).equals(LocalFs.class.getName())) {
            conf.set(CONTEXT_KEY, Fs.class.getName());
        }
    }

    /**
     * {@code file:} for {@code FileContext}: Hadoop's {@link LocalFs} (checksummed, over the raw local filesystem)
     * with the raw filesystem's permissions set in the JVM and its links read there: Delta's log store, which writes
     * each commit through it, forked {@code chmod} and {@code readlink} processes on the writer's path, one after the
     * other (101 in a run of five commits).
     */
    public static final class Fs extends ChecksumFs {
        public Fs(URI uri, Configuration conf) throws IOException, URISyntaxException {
            super(new RawFs(uri, conf));
        }
    }

    /** Hadoop's {@code RawLocalFs} (whose constructors are not public) over {@link Raw}. */
    static final class RawFs extends DelegateToFileSystem {
        RawFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
            super(uri, new Raw(), conf, FsConstants.LOCAL_FS_URI.getScheme(), false);
        }

        @Override
        public int getUriDefaultPort() {
            return -1; // file: has no port
        }

        @Override
        @SuppressWarnings("deprecation")
        public FsServerDefaults getServerDefaults() throws IOException {
            return LocalConfigKeys.getServerDefaults();
        }

        @Override
        public FsServerDefaults getServerDefaults(Path f) throws IOException {
            return LocalConfigKeys.getServerDefaults();
        }

        @Override
        public boolean isValidName(String src) {
            return true; // as Hadoop's: each local filesystem has its own rules, the OS applies them
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

        /**
         * Hadoop's {@code getFileLinkStatus} as this Hadoop runs it (whether the path is a link, then its status), with
         * the link read by {@code java.nio} where Hadoop starts a {@code readlink} process: a rename through
         * {@code FileContext} asks several times. The path's text is read as Hadoop reads it, scheme included.
         */
        @Override
        public FileStatus getFileLinkStatus(Path f) throws IOException {
            java.nio.file.Path local = new java.io.File(f.toString()).toPath();
            String target = Files.isSymbolicLink(local) ? Files.readSymbolicLink(local).toString() : "";
            FileStatus status;
            try {
                FileStatus s = getFileStatus(f);
                if (target.isEmpty()) {
                    return s;
                }
                status = new FileStatus(s.getLen(), false, s.getReplication(), s.getBlockSize(),
                        s.getModificationTime(), s.getAccessTime(), s.getPermission(), s.getOwner(), s.getGroup(),
                        new Path(target), f);
            } catch (FileNotFoundException e) {
                if (target.isEmpty()) {
                    throw e;
                }
                // a dangling link
                status = new FileStatus(0, false, 0, 0, 0, 0, FsPermission.getDefault(), "", "", new Path(target), f);
            }
            status.setSymlink(FSLinkResolver.qualifySymlinkTarget(getUri(), status.getPath(), status.getSymlink()));
            return status;
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
