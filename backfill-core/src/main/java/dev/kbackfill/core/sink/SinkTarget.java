package dev.kbackfill.core.sink;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import dev.kbackfill.resolver.RequestException;

/**
 * The destination as a job is given it, and stored with it (no secrets): where rows go, the modes, the table
 * kbackfill may create and its settings. {@link #settings} adds what a run resolves where it opens the sink (the
 * password, the client settings file, the source) into {@link SinkSettings}.
 *
 * @param url                 {@code --sink}; credentials may be in it
 * @param table               the table, topic or path to write
 * @param user                the database user
 * @param conflict            {@code --on-conflict}
 * @param tombstones          {@code --on-tombstone}
 * @param createTable         create the table (or topic) when absent
 * @param ignoreUnknownFields skip value fields that have no column
 * @param clientFile          the sink's client settings file ({@code --sink-command-config}): a topic sink's
 *                            cluster, a Delta table's filesystem; read where the sink opens, never part of the job
 * @param client              the sink's client settings given one by one ({@code --sink-bootstrap-server}, a
 *                            Delta table's {@code --sink-property}); never secrets
 * @param tableProperties     properties of a table the sink creates
 * @param evolveSchema        {@code --evolve-schema}: add columns for new fields to a table kbackfill did not create
 * @param partitionBy         {@code --partition-by}: how a lake table {@code --create-table} creates is partitioned
 * @param keysDistinctInCollation {@code --keys-distinct-in-collation}: the user says the keys written are distinct in
 *                            the collation of an existing table's key columns (one that folds case, accents or
 *                            trailing spaces), which is then written instead of refused
 */
public record SinkTarget(String url, String table, Optional<String> user, ConflictMode conflict,
                         TombstoneMode tombstones, boolean createTable, boolean ignoreUnknownFields,
                         Optional<Path> clientFile, Map<String, String> client, Map<String, String> tableProperties,
                         boolean evolveSchema, List<String> partitionBy, boolean keysDistinctInCollation) {

    /** A target whose key columns must compare byte for byte. */
    public SinkTarget(String url, String table, Optional<String> user, ConflictMode conflict, TombstoneMode tombstones,
                      boolean createTable, boolean ignoreUnknownFields, Optional<Path> clientFile,
                      Map<String, String> client, Map<String, String> tableProperties, boolean evolveSchema,
                      List<String> partitionBy) {
        this(url, table, user, conflict, tombstones, createTable, ignoreUnknownFields, clientFile, client,
                tableProperties, evolveSchema, partitionBy, false);
    }

    /** Where a run finds the sink's password (else in the URL): never part of a job's settings. */
    public static final String PASSWORD_ENV = "KBACKFILL_SINK_PASSWORD";

    /** A target whose tables are created unpartitioned. */
    public SinkTarget(String url, String table, Optional<String> user, ConflictMode conflict, TombstoneMode tombstones,
                      boolean createTable, boolean ignoreUnknownFields, Optional<Path> clientFile,
                      Map<String, String> client, Map<String, String> tableProperties, boolean evolveSchema) {
        this(url, table, user, conflict, tombstones, createTable, ignoreUnknownFields, clientFile, client,
                tableProperties, evolveSchema, List.of());
    }

    /**
     * A table or topic written under {@code conflict}, tombstones deleting their key, a field the table lacks
     * refused, no settings of its own.
     *
     * @param createTable whether a table (or topic) that does not exist is created
     */
    public static SinkTarget of(String url, String table, ConflictMode conflict, boolean createTable) {
        return new SinkTarget(url, table, Optional.empty(), conflict, TombstoneMode.DELETE, createTable, false,
                Optional.empty(), Map.of(), Map.of());
    }

    /** A target that does not evolve a table kbackfill did not create. */
    public SinkTarget(String url, String table, Optional<String> user, ConflictMode conflict, TombstoneMode tombstones,
                      boolean createTable, boolean ignoreUnknownFields, Optional<Path> clientFile,
                      Map<String, String> client, Map<String, String> tableProperties) {
        this(url, table, user, conflict, tombstones, createTable, ignoreUnknownFields, clientFile, client,
                tableProperties, false);
    }

    public SinkTarget {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(conflict, "conflict");
        Objects.requireNonNull(tombstones, "tombstones");
        Objects.requireNonNull(clientFile, "clientFile");
        client = Map.copyOf(client);
        tableProperties = Map.copyOf(tableProperties);
        partitionBy = List.copyOf(partitionBy);
        for (String key : client.keySet()) {
            if (dev.kbackfill.resolver.ClientConfigs.isCredential(key)) {
                throw new RequestException("invalid --sink-property '" + key + "': it looks like a credential, "
                        + "and a job's settings are stored with it; put it in a --sink-command-config FILE (read "
                        + "where the sink opens) or in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)");
            }
        }
    }

    /** Whether the destination's kind can do {@code capability}. */
    public boolean can(SinkFactory.Capability capability) {
        return SinkFactory.can(url, capability);
    }

    /**
     * The sink's settings for a source {@code topic} whose client settings are {@code sourceConfig}, with the
     * password from {@value #PASSWORD_ENV}: the sink's client settings are its file's, then its own.
     */
    public SinkSettings settings(String topic, Map<String, Object> sourceConfig) {
        Map<String, Object> sinkClient = new HashMap<>();
        clientFile.ifPresent(f -> sinkClient.putAll(dev.kbackfill.resolver.ClientConfigs.fromFile("--sink-command-config", f)));
        sinkClient.putAll(client);
        return new SinkSettings(this, Optional.ofNullable(System.getenv(PASSWORD_ENV)),
                SinkSettings.MetadataColumns.DEFAULT, sinkClient, new SinkSettings.Source(topic, sourceConfig),
                Optional.empty(), dev.kbackfill.core.record.ColumnMapping.none(), false);
    }

    /** This target at another URL for the same destination (a driver's spelling of it). */
    public SinkTarget withUrl(String url) {
        return new SinkTarget(url, table, user, conflict, tombstones, createTable, ignoreUnknownFields, clientFile,
                client, tableProperties, evolveSchema, partitionBy, keysDistinctInCollation);
    }

    /** This target with {@code --evolve-schema} on or off. */
    public SinkTarget withEvolveSchema(boolean evolve) {
        return new SinkTarget(url, table, user, conflict, tombstones, createTable, ignoreUnknownFields, clientFile,
                client, tableProperties, evolve, partitionBy, keysDistinctInCollation);
    }

    /** This target with another table (a shadow of it: {@link Publication}). */
    public SinkTarget withTable(String other) {
        return new SinkTarget(url, other, user, conflict, tombstones, createTable, ignoreUnknownFields, clientFile,
                client, tableProperties, evolveSchema, partitionBy, keysDistinctInCollation);
    }

    /** This target written under another {@code --on-conflict} mode. */
    public SinkTarget withConflict(ConflictMode mode) {
        return new SinkTarget(url, table, user, mode, tombstones, createTable, ignoreUnknownFields, clientFile,
                client, tableProperties, evolveSchema, partitionBy, keysDistinctInCollation);
    }

    /** This target creating a lake table partitioned by {@code partitionBy}. */
    public SinkTarget withPartitionBy(List<String> partitionBy) {
        return new SinkTarget(url, table, user, conflict, tombstones, createTable, ignoreUnknownFields, clientFile,
                client, tableProperties, evolveSchema, partitionBy, keysDistinctInCollation);
    }

    /** This target taking an existing table's key collation as the user says ({@code --keys-distinct-in-collation}). */
    public SinkTarget withKeysDistinctInCollation(boolean distinct) {
        return new SinkTarget(url, table, user, conflict, tombstones, createTable, ignoreUnknownFields, clientFile,
                client, tableProperties, evolveSchema, partitionBy, distinct);
    }
}
