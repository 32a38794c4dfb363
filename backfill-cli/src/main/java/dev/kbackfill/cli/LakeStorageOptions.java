package dev.kbackfill.cli;

import picocli.CommandLine.Option;

/** A lake table's filesystem and catalog settings, for the commands that reach a table without running a job. */
final class LakeStorageOptions {

    @Option(names = "--sink-property", paramLabel = "KEY=VALUE",
            description = "With --sink delta:... or iceberg:...: a setting of the table's filesystem or catalog "
                    + "(repeatable), as for run, for example%nfs.s3a.endpoint=URL")
    java.util.Map<String, String> properties;

    @Option(names = "--sink-command-config", paramLabel = "FILE",
            description = "With --sink delta:... or iceberg:...: a properties file of settings of the "
                    + "filesystem and catalog, credentials among them, as for run.")
    java.nio.file.Path file;

    /**
     * The sink {@code url} with these settings, checked as {@code run} checks them (no credentials on the command
     * line), the password from the environment.
     */
    dev.kbackfill.core.sink.SinkSettings settings(String url, String table, String user,
                                                  java.util.Map<String, Object> kafkaConfig) {
        if (properties != null || file != null) {
            SinkOptions.requireLake(url, properties != null ? "--sink-property" : "--sink-command-config",
                    properties != null ? properties.keySet().iterator().next() : file.toString(), "");
        }
        return new dev.kbackfill.core.sink.SinkTarget(url, table, java.util.Optional.ofNullable(user),
                dev.kbackfill.core.sink.ConflictMode.NEWER_WINS, dev.kbackfill.core.sink.TombstoneMode.DELETE, true,
                false, java.util.Optional.ofNullable(file).map(java.nio.file.Path::toAbsolutePath),
                properties == null ? java.util.Map.of() : properties, java.util.Map.of()).settings("", kafkaConfig);
    }
}
