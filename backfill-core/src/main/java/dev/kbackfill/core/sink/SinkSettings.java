package dev.kbackfill.core.sink;

import java.util.Objects;
import java.util.Optional;

/**
 * What the command line says about the destination.
 *
 * @param url                 {@code --sink}, e.g. {@code jdbc:postgresql://db/app}; credentials may be in it
 * @param table               {@code --table}: the table (or topic, path) to write
 * @param user                {@code --sink-user}, if any
 * @param password            the password, from the environment, if any; never printed
 * @param conflictMode        {@code --on-conflict}
 * @param tombstoneMode       {@code --on-tombstone}
 * @param createTable         {@code --create-table}: create the table from the rows when it is absent
 * @param ignoreUnknownFields skip value fields that have no column instead of failing
 * @param metadata            names of the metadata columns
 */
public record SinkSettings(String url, String table, Optional<String> user, Optional<String> password,
                           ConflictMode conflictMode, TombstoneMode tombstoneMode, boolean createTable,
                           boolean ignoreUnknownFields, MetadataColumns metadata) {

    public SinkSettings {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(password, "password");
        Objects.requireNonNull(conflictMode, "conflictMode");
        Objects.requireNonNull(tombstoneMode, "tombstoneMode");
        Objects.requireNonNull(metadata, "metadata");
    }

    @Override
    public String toString() {
        return "SinkSettings[url=" + url + ", table=" + table + ", user=" + user.orElse("-") + ", password="
                + (password.isPresent() ? "***" : "-") + ", conflictMode=" + conflictMode + ", tombstoneMode="
                + tombstoneMode + ", createTable=" + createTable + "]";
    }

    /**
     * Names of the columns every row carries besides its data; the newer-wins guard compares them.
     *
     * @param partition the source partition
     * @param offset    the source offset
     * @param timestamp the source timestamp
     * @param deleted   the soft-delete flag
     */
    public record MetadataColumns(String partition, String offset, String timestamp, String deleted) {
        public static final MetadataColumns DEFAULT = new MetadataColumns("kafka_partition", "kafka_offset",
                "kafka_timestamp", "kafka_deleted");
    }
}
