package dev.kbackfill.cli;

import picocli.CommandLine.Option;

/** The sink that holds jobs' state: for {@code status}, {@code reset} and {@code jobs}. */
final class JobStoreOptions {

    @Option(names = "--sink", paramLabel = "URL", description = "The sink the job writes to (default: the SQLite file ./kbackfill.db).")
    String sink;

    @Option(names = "--table", paramLabel = "TABLE", description = "With a schema (SCHEMA.TABLE), where the job tables are.")
    String table;

    @Option(names = "--sink-user", paramLabel = "USER", description = "Database user; the password comes from $"
            + SinkOptions.PASSWORD_ENV + " or the URL.")
    String user;

    @picocli.CommandLine.Mixin
    LakeStorageOptions storage = new LakeStorageOptions();

    /** @param kafkaConfig the cluster of a {@code kafka:} sink ({@code --bootstrap-server}) */
    dev.kbackfill.core.sink.SinkSettings settings(java.util.Map<String, Object> kafkaConfig) {
        return storage.settings(url(), table == null ? "kbackfill_jobs" : table, user, kafkaConfig);
    }

    /** The sink's URL, the default one's where none is given. */
    String url() {
        return sink == null ? SinkOptions.DEFAULT_SINK : sink;
    }

    /**
     * The client settings of the cluster the sink's jobs are kept in, where its kind keeps them in one (a topic
     * sink's job topic): only then is the built-in bootstrap server named, as the command contacts it.
     */
    java.util.Map<String, Object> kafkaConfig(KafkaOptions kafka) {
        boolean contacted = dev.kbackfill.core.sink.SinkFactory.can(url(),
                dev.kbackfill.core.sink.SinkFactory.Capability.OWN_CLUSTER);
        return contacted ? kafka.clientConfig() : kafka.clientConfigQuietly();
    }
}
