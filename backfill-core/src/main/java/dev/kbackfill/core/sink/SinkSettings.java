package dev.kbackfill.core.sink;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The destination as a sink opens it: the job's {@link SinkTarget} (where rows go, the modes, the table it may
 * create: what a job stores) and what a run resolves besides (the password, the client settings, the source, the
 * metadata columns, the version field and column mapping of the job's decoding).
 *
 * @param target       the destination as the job gives it
 * @param password     the password, from the environment, if any; never printed
 * @param metadata     names of the metadata columns
 * @param clientConfig client settings of sinks that are Kafka clients ({@code bootstrap.servers}, security) or
 *                     reach a lake table's storage: the target's settings file, then its own settings
 * @param source       what the sink may need to know of the source: its topic and client settings
 * @param versionField the value field the job orders versions by ({@code --version-field}), if any: its values are
 *                     kept in {@link MetadataColumns#version()}
 * @param mapping      which fields become which columns ({@code --columns}, {@code --rename},
 *                     {@code --header-columns}): which value columns of the target the job writes
 *                     ({@link dev.kbackfill.core.record.ColumnMapping#writes})
 * @param engineWrites whether an engine writes the rows with its own writer ({@link #withEngineWrites})
 * @param typedKeys    whether keys come typed, so that text and numbers are distinct keys ({@link #withTypedKeys})
 */
public record SinkSettings(SinkTarget target, Optional<String> password, MetadataColumns metadata,
                           Map<String, Object> clientConfig, Source source,
                           Optional<dev.kbackfill.core.version.VersionField> versionField,
                           dev.kbackfill.core.record.ColumnMapping mapping, boolean engineWrites,
                           boolean typedKeys) {

    /** Settings whose keys come as text ({@link #typedKeys} false). */
    public SinkSettings(SinkTarget target, Optional<String> password, MetadataColumns metadata,
                        Map<String, Object> clientConfig, Source source,
                        Optional<dev.kbackfill.core.version.VersionField> versionField,
                        dev.kbackfill.core.record.ColumnMapping mapping, boolean engineWrites) {
        this(target, password, metadata, clientConfig, source, versionField, mapping, engineWrites, false);
    }

    public SinkSettings {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(password, "password");
        Objects.requireNonNull(metadata, "metadata");
        clientConfig = Map.copyOf(clientConfig);
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(versionField, "versionField");
        Objects.requireNonNull(mapping, "mapping");
    }

    /**
     * Settings from their parts, the target's own client settings empty.
     *
     * @param url                 {@code --sink}, e.g. {@code jdbc:postgresql://db/app}; credentials may be in it
     * @param table               {@code --table}: the table (or topic, path) to write
     * @param user                {@code --sink-user}, if any
     * @param conflictMode        {@code --on-conflict}
     * @param tombstoneMode       {@code --on-tombstone}
     * @param createTable         {@code --create-table}: create the table from the rows when it is absent
     * @param ignoreUnknownFields skip value fields that have no column instead of failing
     * @param tableProperties     properties of a table the sink creates, on top of its own
     * @param evolveSchema        {@code --evolve-schema}: add a nullable column for a field the table lacks, also to a
     *                            table kbackfill did not create (where the sink can add columns)
     * @param partitionBy         how a lake table {@code --create-table} creates is partitioned ({@code --partition-by})
     */
    public SinkSettings(String url, String table, Optional<String> user, Optional<String> password,
                        ConflictMode conflictMode, TombstoneMode tombstoneMode, boolean createTable,
                        boolean ignoreUnknownFields, MetadataColumns metadata, Map<String, Object> clientConfig,
                        Source source, Map<String, String> tableProperties,
                        Optional<dev.kbackfill.core.version.VersionField> versionField, boolean evolveSchema,
                        dev.kbackfill.core.record.ColumnMapping mapping, java.util.List<String> partitionBy) {
        this(new SinkTarget(url, table, user, conflictMode, tombstoneMode, createTable, ignoreUnknownFields,
                Optional.empty(), Map.of(), tableProperties, evolveSchema, partitionBy), password, metadata,
                clientConfig, source, versionField, mapping, false);
    }

    /** Settings that create tables unpartitioned. */
    public SinkSettings(String url, String table, Optional<String> user, Optional<String> password,
                        ConflictMode conflictMode, TombstoneMode tombstoneMode, boolean createTable,
                        boolean ignoreUnknownFields, MetadataColumns metadata, Map<String, Object> clientConfig,
                        Source source, Map<String, String> tableProperties,
                        Optional<dev.kbackfill.core.version.VersionField> versionField, boolean evolveSchema,
                        dev.kbackfill.core.record.ColumnMapping mapping) {
        this(url, table, user, password, conflictMode, tombstoneMode, createTable, ignoreUnknownFields, metadata,
                clientConfig, source, tableProperties, versionField, evolveSchema, mapping, java.util.List.of());
    }

    /** Settings without a column mapping: the job writes every value column of its target. */
    public SinkSettings(String url, String table, Optional<String> user, Optional<String> password,
                        ConflictMode conflictMode, TombstoneMode tombstoneMode, boolean createTable,
                        boolean ignoreUnknownFields, MetadataColumns metadata, Map<String, Object> clientConfig,
                        Source source, Map<String, String> tableProperties,
                        Optional<dev.kbackfill.core.version.VersionField> versionField, boolean evolveSchema) {
        this(url, table, user, password, conflictMode, tombstoneMode, createTable, ignoreUnknownFields, metadata,
                clientConfig, source, tableProperties, versionField, evolveSchema,
                dev.kbackfill.core.record.ColumnMapping.none());
    }

    /** Settings that do not evolve a table they did not create. */
    public SinkSettings(String url, String table, Optional<String> user, Optional<String> password,
                        ConflictMode conflictMode, TombstoneMode tombstoneMode, boolean createTable,
                        boolean ignoreUnknownFields, MetadataColumns metadata, Map<String, Object> clientConfig,
                        Source source, Map<String, String> tableProperties,
                        Optional<dev.kbackfill.core.version.VersionField> versionField) {
        this(url, table, user, password, conflictMode, tombstoneMode, createTable, ignoreUnknownFields, metadata,
                clientConfig, source, tableProperties, versionField, false);
    }

    /** Settings without a version field. */
    public SinkSettings(String url, String table, Optional<String> user, Optional<String> password,
                        ConflictMode conflictMode, TombstoneMode tombstoneMode, boolean createTable,
                        boolean ignoreUnknownFields, MetadataColumns metadata, Map<String, Object> clientConfig,
                        Source source, Map<String, String> tableProperties) {
        this(url, table, user, password, conflictMode, tombstoneMode, createTable, ignoreUnknownFields, metadata,
                clientConfig, source, tableProperties, Optional.empty());
    }

    /** Settings without table properties of their own. */
    public SinkSettings(String url, String table, Optional<String> user, Optional<String> password,
                        ConflictMode conflictMode, TombstoneMode tombstoneMode, boolean createTable,
                        boolean ignoreUnknownFields, MetadataColumns metadata, Map<String, Object> clientConfig,
                        Source source) {
        this(url, table, user, password, conflictMode, tombstoneMode, createTable, ignoreUnknownFields, metadata,
                clientConfig, source, Map.of());
    }

    /** Settings of a database sink. */
    public SinkSettings(String url, String table, Optional<String> user, Optional<String> password,
                        ConflictMode conflictMode, TombstoneMode tombstoneMode, boolean createTable,
                        boolean ignoreUnknownFields, MetadataColumns metadata) {
        this(url, table, user, password, conflictMode, tombstoneMode, createTable, ignoreUnknownFields, metadata,
                Map.of(), Source.NONE);
    }

    /** {@code --sink}, e.g. {@code jdbc:postgresql://db/app}; credentials may be in it. */
    public String url() {
        return target.url();
    }

    /** {@code --table}: the table (or topic, path) to write. */
    public String table() {
        return target.table();
    }

    /** {@code --sink-user}, if any. */
    public Optional<String> user() {
        return target.user();
    }

    /** {@code --on-conflict}. */
    public ConflictMode conflictMode() {
        return target.conflict();
    }

    /** {@code --on-tombstone}. */
    public TombstoneMode tombstoneMode() {
        return target.tombstones();
    }

    /** {@code --create-table}: create the table from the rows when it is absent. */
    public boolean createTable() {
        return target.createTable();
    }

    /** Skip value fields that have no column instead of failing. */
    public boolean ignoreUnknownFields() {
        return target.ignoreUnknownFields();
    }

    /** Properties of a table the sink creates ({@code --table-property}), on top of its own. */
    public Map<String, String> tableProperties() {
        return target.tableProperties();
    }

    /** {@code --evolve-schema}: add a nullable column for a field the table lacks, also to one it did not create. */
    public boolean evolveSchema() {
        return target.evolveSchema();
    }

    /** Whether the user says the keys are distinct in an existing table's key collation ({@link SinkTarget#keysDistinctInCollation}). */
    public boolean keysDistinctInCollation() {
        return target.keysDistinctInCollation();
    }

    /** How a lake table {@code --create-table} creates is partitioned: columns, or Iceberg transforms. */
    public java.util.List<String> partitionBy() {
        return target.partitionBy();
    }

    /** Whether a field the table has no column for gets one ({@code --create-table} or {@code --evolve-schema}). */
    public boolean addsColumns() {
        return createTable() || evolveSchema();
    }

    /** These settings with {@code --evolve-schema} on or off. */
    public SinkSettings withEvolveSchema(boolean evolve) {
        return withTarget(target.withEvolveSchema(evolve));
    }

    /** These settings with another URL for the same destination (a driver's spelling of it). */
    public SinkSettings withUrl(String url) {
        return withTarget(target.withUrl(url));
    }

    /** These settings with another table of the same destination (a shadow: {@link Publication}). */
    public SinkSettings withTable(String table) {
        return withTarget(target.withTable(table));
    }

    /** These settings written under another {@code --on-conflict} mode (a repair overwrites the keys it fixes). */
    public SinkSettings withConflict(ConflictMode mode) {
        return withTarget(target.withConflict(mode));
    }

    /** These settings creating a lake table partitioned by {@code partitionBy}. */
    public SinkSettings withPartitionBy(java.util.List<String> partitionBy) {
        return withTarget(target.withPartitionBy(partitionBy));
    }

    private SinkSettings withTarget(SinkTarget target) {
        return new SinkSettings(target, password, metadata, clientConfig, source, versionField, mapping, engineWrites, typedKeys);
    }

    /**
     * These settings for a run whose rows an engine writes with its own writer ({@code --engine spark}: Spark's
     * {@code MERGE} into a Delta table), the sink storing the job's state: table features that writer honours
     * (generated columns, CHECK constraints) are not refused when the sink opens.
     */
    public SinkSettings withEngineWrites(boolean engineWrites) {
        return new SinkSettings(target, password, metadata, clientConfig, source, versionField, mapping, engineWrites, typedKeys);
    }

    /**
     * These settings for a job whose keys come typed ({@code true}: a structured key format, or {@code --key-fields},
     * where the key {@code 8} is a number and {@code "8"} text, two keys) or as text ({@code false}: the string and
     * bytes formats, whose keys are all text or all bytes).
     */
    public SinkSettings withTypedKeys(boolean typed) {
        return new SinkSettings(target, password, metadata, clientConfig, source, versionField, mapping, engineWrites,
                typed);
    }

    /** These settings for a job that maps fields to columns by {@code mapping}. */
    public SinkSettings withMapping(dev.kbackfill.core.record.ColumnMapping mapping) {
        return new SinkSettings(target, password, metadata, clientConfig, source, versionField, mapping, engineWrites, typedKeys);
    }

    /**
     * Whether {@code column}, a column of the target, is one of the row's value columns that the job writes: not a
     * key column (the caller knows those), not one of the {@link #metadata()} columns, and one the
     * {@link #mapping()} writes. A row holds the key's last record in every such column, NULL where it lacks the
     * field.
     */
    public boolean writesValueColumn(String column) {
        return !metadata.contains(column) && mapping.writes(column);
    }

    /** These settings for a job that orders versions by {@code field}, or by none. */
    public SinkSettings withVersionField(Optional<dev.kbackfill.core.version.VersionField> field) {
        return new SinkSettings(target, password, metadata, clientConfig, source, field, mapping, engineWrites, typedKeys);
    }

    /**
     * The source as a sink may need it.
     *
     * @param topic        the source topic
     * @param clientConfig the source cluster's client settings
     */
    public record Source(String topic, Map<String, Object> clientConfig) {
        public static final Source NONE = new Source("", Map.of());

        public Source {
            clientConfig = Map.copyOf(clientConfig);
        }
    }

    /**
     * The metadata columns the modes need in a table: partition, offset, timestamp and log time for the newer-wins
     * guard, and the version field's column where the job orders by one; the deleted flag for soft deletes. A sink
     * that may shape the table ({@code --create-table}) adds those it lacks; others refuse the table, naming them.
     */
    public java.util.List<String> requiredMetadataColumns() {
        java.util.List<String> required = new java.util.ArrayList<>();
        if (conflictMode() == ConflictMode.NEWER_WINS) {
            required.addAll(java.util.List.of(metadata.partition(), metadata.offset(), metadata.timestamp(),
                    metadata.logTime()));
            versionField.ifPresent(f -> required.add(metadata.version()));
        }
        if (tombstoneMode() == TombstoneMode.SOFT_DELETE) {
            required.add(metadata.deleted());
        }
        return required;
    }

    @Override
    public String toString() {
        return "SinkSettings[url=" + url() + ", table=" + table() + ", user=" + user().orElse("-") + ", password="
                + (password.isPresent() ? "***" : "-") + ", conflictMode=" + conflictMode() + ", tombstoneMode="
                + tombstoneMode() + ", createTable=" + createTable() + "]";
    }

    /**
     * Names of the columns every row carries besides its data; the newer-wins guard compares them.
     *
     * @param partition the source partition
     * @param offset    the source offset
     * @param timestamp the source timestamp
     * @param deleted   the soft-delete flag
     * @param topic     the source topic: the version rule compares offsets only within one topic's partition
     * @param logTime   the log time
     * @param version   the version field's value ({@code --version-field}), where the job orders by one
     */
    public record MetadataColumns(String partition, String offset, String timestamp, String deleted, String topic,
                                  String logTime, String version) implements java.io.Serializable {
        public static final MetadataColumns DEFAULT = new MetadataColumns("kafka_partition", "kafka_offset",
                "kafka_timestamp", "kafka_deleted", "kafka_topic", "kafka_log_time", "kafka_version");

        /** Whether {@code column} is one of these (names compared as databases do, without regard to case). */
        public boolean contains(String column) {
            for (String m : new String[] {partition, offset, timestamp, deleted, topic, logTime, version}) {
                if (m.equalsIgnoreCase(column)) {
                    return true;
                }
            }
            return false;
        }

        /** The default topic, log time and version columns' names. */
        public MetadataColumns(String partition, String offset, String timestamp, String deleted) {
            this(partition, offset, timestamp, deleted, "kafka_topic", "kafka_log_time", "kafka_version");
        }

        /** The default log time and version columns' names. */
        public MetadataColumns(String partition, String offset, String timestamp, String deleted, String topic) {
            this(partition, offset, timestamp, deleted, topic, "kafka_log_time", "kafka_version");
        }

        /** The default version column's name. */
        public MetadataColumns(String partition, String offset, String timestamp, String deleted, String topic,
                               String logTime) {
            this(partition, offset, timestamp, deleted, topic, logTime, "kafka_version");
        }
    }

    /** The URL by its kind; a URL of no kind is refused in one line naming it. */
}
