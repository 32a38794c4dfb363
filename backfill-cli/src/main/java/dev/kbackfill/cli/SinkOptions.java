package dev.kbackfill.cli;

import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkFactory.Capability;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import picocli.CommandLine.Option;

/** Where and how rows are written. */
final class SinkOptions {

    /** The embedded default: a SQLite file in the working directory. */
    static final String DEFAULT_SINK = "jdbc:sqlite:kbackfill.db";
    static final String PASSWORD_ENV = JobDefinition.SINK_PASSWORD_ENV;

    @Option(names = "--sink", paramLabel = "URL",
            description = {"Where to write:", "jdbc:postgresql://HOST/DB,", "jdbc:mariadb://HOST/DB,",
                    "jdbc:mysql://HOST/DB, jdbc:sqlite:FILE,", "jdbc:h2:..., delta:PATH (a Delta table),",
                    "iceberg:PATH (an Iceberg table),",
                    "iceberg:jdbc:JDBC-URL#NAMESPACE.TABLE,",
                    "iceberg:hadoop:WAREHOUSE#NAMESPACE.TABLE,",
                    "iceberg:rest:URI#NAMESPACE.TABLE (a catalog's),",
                    "kafka:TOPIC (a compacted topic)",
                    "(default: the SQLite file ./kbackfill.db, table created)."})
    String sink;

    @Option(names = "--table", paramLabel = "TABLE", description = "The table (default: the topic name, with "
            + "characters other than letters, digits and _ replaced by _).")
    String table;

    @Option(names = "--sink-user", paramLabel = "USER",
            description = "Database user (or in the URL). The password comes from $" + PASSWORD_ENV + " or the URL.")
    String user;

    @Option(names = "--on-conflict", paramLabel = "CONFLICT", defaultValue = "newer-wins",
            completionCandidates = Candidates.Conflict.class,
            description = "newer-wins (default: never replace a row, or undo a delete, of a newer version: the same "
                    + "partition's higher offset, else the later timestamp), overwrite, insert-only (only keys the target "
                    + "has no row for).")
    String onConflict;

    @Option(names = "--on-tombstone", paramLabel = "TOMBSTONE", defaultValue = "delete",
            completionCandidates = Candidates.Tombstone.class,
            description = "delete (default), soft-delete (keep the row marked kafka_deleted), ignore.")
    String onTombstone;

    @Option(names = "--live-writer", paramLabel = "auto|yes|no", defaultValue = "auto",
            completionCandidates = Candidates.LiveWriters.class,
            description = "Whether another writer (the streaming pipeline that keeps the table current) writes it too. "
                    + "Beside one, a row without kbackfill's version is that writer's, and a record of the range is "
                    + "written only where the log holds no later record of its key (read after the range, up to the "
                    + "log's end); the rest are counted as superseded in the log. auto (default): yes where the "
                    + "target holds such a row when the run starts; yes; no (such rows are replaced by newer records).")
    String liveWriter;

    @Option(names = "--keys-distinct-in-collation", description = "Write a table whose key columns compare keys "
            + "other than byte for byte (a collation that ignores case, accents or trailing spaces), which is "
            + "otherwise refused: the keys written are known to be distinct in it.")
    boolean keysDistinctInCollation;

    @Option(names = "--create-table", description = "Create the table from the records when it does not exist, "
            + "and add columns for fields first seen later.")
    boolean createTable;

    @Option(names = "--evolve-schema", description = "Add a nullable column for a value field the table has no column "
            + "for, and widen a number column too narrow for a value, also in a table kbackfill did not create (a Delta "
            + "table needs column mapping for it).")
    boolean evolveSchema;

    @Option(names = {"--table-property", "--delta-table-property"}, paramLabel = "KEY=VALUE",
            description = "With --sink delta:... or iceberg:...: a property of the table --create-table creates, over "
                    + "kbackfill's (repeatable), for example%ndelta.enableDeletionVectors=false for readers without "
                    + "deletion vectors.")
    java.util.Map<String, String> deltaTableProperties;

    @Option(names = "--partition-by", paramLabel = "SPEC", split = ",(?![^(]*\\))", splitSynopsisLabel = ",",
            description = "With --create-table, for delta:... and iceberg:...: partition the new table by these columns "
                    + "(Delta: columns; Iceberg: columns or transforms such as day(ts), bucket(16, id), truncate(4, s)).")
    List<String> partitionBy;

    @Option(names = "--ignore-unknown-fields", description = "Skip value fields that have no column instead of failing.")
    boolean ignoreUnknownFields;

    @Option(names = "--create-topic", description = "With --sink kafka:TOPIC: create the topic when absent, compacted, "
            + "with the source's partition count.")
    boolean createTopic;

    @Option(names = "--sink-bootstrap-server", paramLabel = "HOST:PORT",
            description = "With --sink kafka:TOPIC on another cluster: its bootstrap servers (default: the source's).")
    String sinkBootstrap;

    @Option(names = "--sink-command-config", paramLabel = "FILE",
            description = "A properties file of the sink's client settings, read where the sink opens and never "
                    + "stored with the job: with --sink-bootstrap-server that cluster's, with --sink delta:... the "
                    + "filesystem's (fs.s3a.* with credentials), with --sink iceberg:... the catalog's and the "
                    + "filesystem's.")
    java.nio.file.Path sinkCommandConfig;

    @Option(names = "--sink-property", paramLabel = "KEY=VALUE",
            description = "With --sink delta:... or iceberg:...: a setting of the table's filesystem (fs.*) or "
                    + "catalog (repeatable), for example%nfs.s3a.endpoint=http://minio:9000 or warehouse=/data/lake; "
                    + "no credentials (those come from the environment, AWS's default chain or --sink-command-config).")
    java.util.Map<String, String> sinkProperties;

    /**
     * {@code --live-writer}, checked against the conflict mode: beside a live writer only newer-wins orders records
     * against its rows.
     */
    dev.kbackfill.core.run.LiveWriter liveWriter() {
        dev.kbackfill.core.run.LiveWriter w = dev.kbackfill.core.run.LiveWriter.parse(liveWriter == null ? "auto" : liveWriter);
        if (w == dev.kbackfill.core.run.LiveWriter.YES && ConflictMode.parse(onConflict) != ConflictMode.NEWER_WINS) {
            throw new dev.kbackfill.resolver.RequestException("--live-writer yes needs --on-conflict newer-wins, not "
                    + onConflict + ": only newer-wins orders the range's records against another writer's rows");
        }
        return w;
    }

    /** Whether the sink's kind can do {@code capability}. */
    boolean can(Capability capability) {
        return SinkFactory.can(url(), capability);
    }

    /** Whether the sink keeps records whole (a topic): their values are not decoded into columns. */
    boolean copiesRecords() {
        return can(Capability.COPIES_RECORDS);
    }

    boolean isDefault() {
        return sink == null;
    }

    String url() {
        return sink == null ? DEFAULT_SINK : sink;
    }

    SinkSettings settings(String topic, java.util.Map<String, Object> sourceConfig) {
        return target(topic).settings(topic, sourceConfig);
    }

    /** The destination as these options give it (the password is read from $KBACKFILL_SINK_PASSWORD where used). */
    dev.kbackfill.core.sink.SinkTarget target(String topic) {
        String tableName = table != null ? table : tableFor(topic);
        java.util.Map<String, String> client = new java.util.HashMap<>();
        if (sinkBootstrap != null) {
            client.put("bootstrap.servers", sinkBootstrap);
        }
        if (sinkProperties != null && !sinkProperties.isEmpty()) {
            requireLake(url(), "--sink-property", sinkProperties.keySet().iterator().next(),
                    " (a topic sink on another cluster takes --sink-command-config)");
            client.putAll(sinkProperties);
        }
        java.util.Map<String, String> properties = deltaTableProperties == null ? java.util.Map.of() : deltaTableProperties;
        if (!properties.isEmpty()) {
            requireLake(url(), "--table-property", properties.keySet().iterator().next(), "");
        }
        // options of other kinds are refused rather than ignored (--create-topic is not --create-table)
        for (Object[] o : new Object[][] {{"--sink-bootstrap-server", sinkBootstrap, Capability.OWN_CLUSTER},
                {"--sink-command-config", sinkCommandConfig, Capability.CLIENT_FILE},
                {"--create-topic", createTopic ? "" : null, Capability.OWN_CLUSTER}}) {
            if (o[1] != null && !can((Capability) o[2])) {
                throw new dev.kbackfill.resolver.RequestException(o[0] + " is for --sink "
                        + SinkFactory.listed(SinkFactory.formsWith((Capability) o[2])) + " only, not " + scheme(url())
                        + (o[0].equals("--create-topic") ? " (to create a table, pass --create-table)" : ""));
            }
        }
        if (evolveSchema && copiesRecords()) {
            throw new dev.kbackfill.resolver.RequestException("--evolve-schema is for tables: a sink that keeps "
                    + "records whole (--sink " + SinkFactory.listed(SinkFactory.formsWith(Capability.COPIES_RECORDS))
                    + ") has no columns");
        }
        if (evolveSchema && ignoreUnknownFields) {
            throw new dev.kbackfill.resolver.RequestException("--evolve-schema and --ignore-unknown-fields exclude each "
                    + "other: a new field either becomes a column or is left out");
        }
        List<String> partitions = partitionBy == null ? List.of() : partitionBy.stream().map(String::strip).toList();
        if (!partitions.isEmpty()) {
            requireLake(url(), "--partition-by", String.join(",", partitions), "");
            if (!createTable) {
                throw new dev.kbackfill.resolver.RequestException("--partition-by '" + String.join(",", partitions)
                        + "' shapes a table --create-table creates; pass --create-table (an existing table keeps its "
                        + "own partitioning, which kbackfill writes as it is)");
            }
        }
        return new dev.kbackfill.core.sink.SinkTarget(url(), tableName, Optional.ofNullable(user), ConflictMode.parse(onConflict),
                TombstoneMode.parse(onTombstone), createTable || createTopic || isDefault(), ignoreUnknownFields,
                Optional.ofNullable(sinkCommandConfig).map(java.nio.file.Path::toAbsolutePath), client, properties,
                evolveSchema, partitions, keysDistinctInCollation);
    }

    /** Refuses an option of lake tables given with another sink: one line naming the option, its value and the sink. */
    static void requireLake(String url, String option, String value, String hint) {
        if (!SinkFactory.can(url, Capability.STORAGE_SETTINGS)) {
            throw new dev.kbackfill.resolver.RequestException("invalid " + option + " '" + value + "': it is for --sink "
                    + SinkFactory.listed(SinkFactory.formsWith(Capability.STORAGE_SETTINGS)) + " only, not "
                    + scheme(url) + hint);
        }
    }

    /** The scheme part of a sink URL, for messages: {@code jdbc:postgresql:}, {@code delta:}. */
    private static String scheme(String url) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(jdbc:[a-z0-9]+:|[a-z]+:)").matcher(url);
        return m.find() ? m.group(1) : url;
    }

    static String tableFor(String topic) {
        String s = topic.replaceAll("[^A-Za-z0-9_]", "_");
        return Character.isDigit(s.charAt(0)) ? "t_" + s : s;
    }

    static List<String> split(String csv) {
        return csv == null ? List.of() : List.of(csv.split("\\s*,\\s*"));
    }
}
