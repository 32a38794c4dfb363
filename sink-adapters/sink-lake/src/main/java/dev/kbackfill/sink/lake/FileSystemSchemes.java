package dev.kbackfill.sink.lake;

import java.util.List;

import dev.kbackfill.core.sink.SinkConfigException;
import org.apache.hadoop.conf.Configuration;

/**
 * A lake table's location checked before anything is read: a URI scheme no Hadoop filesystem serves (a typo such
 * as {@code hadop:} or {@code s3x://}) is bad input, named with the forms the sink accepts, not a failure to retry.
 */
public final class FileSystemSchemes {

    private FileSystemSchemes() {
    }

    /**
     * Serves {@code s3://} with S3A, as Spark on EMR and Databricks spell S3 locations, unless the settings name a
     * filesystem for it.
     */
    public static void s3AsS3a(Configuration conf) {
        if (conf.get("fs.s3.impl") == null) {
            conf.set("fs.s3.impl", ConditionalWrites.S3A);
        }
    }

    /**
     * @param location the table's location (a local path, or a URI with a scheme)
     * @param url      the sink URL as given, for the message (redacted)
     * @param forms    the sink's accepted forms
     */
    public static void require(String location, Configuration conf, String url, List<String> forms) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^([a-zA-Z][a-zA-Z0-9+.-]*):.*").matcher(location);
        if (!m.matches() || m.group(1).length() == 1) {
            return; // a local path (a Windows drive letter is no scheme)
        }
        String scheme = m.group(1);
        try {
            org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, conf);
        } catch (java.io.IOException e) {
            throw new SinkConfigException("invalid --sink '" + dev.kbackfill.core.sink.SinkFactory.redact(url)
                    + "': no filesystem for the scheme '" + scheme + ":' (local paths, file:, s3a:// and s3://, "
                    + "hdfs:// and the filesystems on the classpath); expected " + String.join(", ", forms));
        }
    }
}
