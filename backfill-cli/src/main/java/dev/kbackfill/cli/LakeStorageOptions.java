package dev.kbackfill.cli;

import picocli.CommandLine.Option;

/** A Delta table's filesystem settings, for the commands that reach a table without running a job. */
final class LakeStorageOptions {

    @Option(names = "--sink-property", paramLabel = "KEY=VALUE",
            description = "With --sink delta:PATH: a setting of the table's filesystem (repeatable), as for "
                    + "run, for example%nfs.s3a.endpoint=URL")
    java.util.Map<String, String> properties;

    @Option(names = "--sink-command-config", paramLabel = "FILE",
            description = "With --sink delta:PATH: a properties file of the filesystem's settings (fs.s3a.* with "
                    + "credentials), as for run.")
    java.nio.file.Path file;

    /**
     * The sink {@code url} with these settings, checked as {@code run} checks them (no credentials on the command
     * line), the password from the environment.
     */
    dev.kbackfill.core.sink.SinkSettings settings(String url, String table, String user,
                                                  java.util.Map<String, Object> kafkaConfig) {
        if (!url.startsWith("delta:") && (properties != null || file != null)) {
            throw new dev.kbackfill.resolver.RequestException((properties != null ? "--sink-property"
                    : "--sink-command-config") + " is for --sink delta:PATH only here");
        }
        return new dev.kbackfill.core.run.JobDefinition.Target(url, table, java.util.Optional.ofNullable(user),
                dev.kbackfill.core.sink.ConflictMode.NEWER_WINS, dev.kbackfill.core.sink.TombstoneMode.DELETE, true,
                false, java.util.Optional.ofNullable(file).map(java.nio.file.Path::toAbsolutePath),
                properties == null ? java.util.Map.of() : properties, java.util.Map.of()).settings("", kafkaConfig);
    }
}
