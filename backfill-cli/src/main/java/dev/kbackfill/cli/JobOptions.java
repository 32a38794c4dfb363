package dev.kbackfill.cli;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Which job, in which sink: for {@code status} and {@code reset}. */
final class JobOptions {

    @Option(names = "--job", required = true, paramLabel = "NAME", description = "The job name (as printed by run).")
    String job;

    @Mixin
    JobStoreOptions store;

    /** @param kafkaConfig the cluster of a {@code kafka:} sink ({@code --bootstrap-server}) */
    dev.kbackfill.core.sink.SinkSettings settings(java.util.Map<String, Object> kafkaConfig) {
        return store.settings(kafkaConfig);
    }

    /** The settings of the sink whose jobs these are, the cluster's named only where the sink contacts it. */
    dev.kbackfill.core.sink.SinkSettings settings(KafkaOptions kafka) {
        return store.settings(store.kafkaConfig(kafka));
    }
}
