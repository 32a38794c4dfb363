package dev.kbackfill.cli;

import java.nio.file.Path;
import java.util.Optional;

import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.resolver.RequestException;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** How records become rows: formats, key and value columns, key fields, the version field, the schema registry. */
final class DecodingOptions {

    @Option(names = "--key-format", paramLabel = "FORMAT", defaultValue = "string",
            completionCandidates = Candidates.Formats.class,
            description = "bytes, string (default), json, or a Confluent-framed format with --schema-registry-url: "
                    + "avro, protobuf or json-schema. An object key gives one key column per field.")
    String keyFormat;

    @Option(names = "--value-format", paramLabel = "FORMAT", defaultValue = "json",
            completionCandidates = Candidates.Formats.class,
            description = "bytes, string, json (default), or a Confluent-framed format with --schema-registry-url: "
                    + "avro, protobuf or json-schema. An object gives one column per top-level field, typed by its "
                    + "schema where it has one.")
    String valueFormat;

    @Option(names = "--key-column", paramLabel = "NAME", defaultValue = "kafka_key",
            description = "Column of a key that is not a JSON object (default: ${DEFAULT-VALUE}).")
    String keyColumn;

    @Option(names = "--value-column", paramLabel = "NAME", defaultValue = "value",
            description = "Column of a value that is not a JSON object (default: ${DEFAULT-VALUE}).")
    String valueColumn;

    @Option(names = "--key-fields", paramLabel = "F1,F2", description = "Key rows by these value fields instead of the record key.")
    String keyFields;

    @Option(names = "--version-field", paramLabel = "FIELD[:TYPE]",
            description = "Order a key's versions by this value field first (a CDC topic's source.lsn or ts_ms, an "
                    + "updated_at), then by the log as always; TYPE integer (default), timestamp or string; dots "
                    + "reach into nested objects. A record without it is a poison record; a tombstone takes the field "
                    + "of the nearest record before it in its partition.")
    String versionField;

    @Option(names = "--validate",
            description = "Check each json-schema record against its JSON Schema; one that fails is a poison record "
                    + "(see --on-error) named with its first violation.")
    boolean validate;

    @Option(names = "--where", paramLabel = "EXPR",
            description = {"Keep only the records for which this CEL expression is true; the rest are counted as "
                    + "filtered. It sees key, value (its fields, nested ones too; null for a tombstone), headers, "
                    + "timestamp, partition and offset, for example:",
                    "  \"value.status == 'packed' && partition == 0\""})
    String where;

    @Option(names = "--columns", paramLabel = "F1,F2",
            description = "Write only these value fields as columns (the key's are always written).")
    String columns;

    @Option(names = "--rename", paramLabel = "FIELD=COLUMN",
            description = "Write a key or value field under another column name; repeatable.")
    java.util.List<String> renames = new java.util.ArrayList<>();

    @Option(names = "--header-columns", paramLabel = "H1,H2",
            description = "Write these headers as text columns named by the header (null where a record lacks it).")
    String headerColumns;

    @Option(names = "--schema-registry-url", paramLabel = "URL",
            description = "A Confluent-API schema registry, for the avro, protobuf and json-schema formats.")
    String registryUrl;

    @Option(names = "--schema-registry-user", paramLabel = "USER",
            description = "Registry basic-auth user; the password comes from $" + JobDefinition.REGISTRY_PASSWORD_ENV + ".")
    String registryUser;

    @Option(names = "--schema-registry-token-file", paramLabel = "FILE",
            description = "A bearer token for the registry, read from FILE (or from $" + JobDefinition.REGISTRY_TOKEN_ENV + ").")
    Path registryTokenFile;

    @Option(names = "--schema-registry-truststore", paramLabel = "FILE",
            description = "Trust the https registry's certificate through this trust store (PKCS12 or JKS; its "
                    + "password from $" + JobDefinition.REGISTRY_TRUSTSTORE_PASSWORD_ENV + "), e.g. for a private CA.")
    Path registryTrustStore;

    /** How records become rows, as the options say. */
    JobDefinition.Decoding decoding(CommandLine cli, boolean copiesRecords) {
        // a topic sink copies records as they are: read bytes unless a format is asked for
        CommandLine.ParseResult parsed = cli.getParseResult();
        Format key = copiesRecords && !parsed.hasMatchedOption("--key-format") ? Format.BYTES
                : Format.parse("--key-format", keyFormat);
        Format value = copiesRecords && !parsed.hasMatchedOption("--value-format") ? Format.BYTES
                : Format.parse("--value-format", valueFormat);
        Optional<JobDefinition.Registry> registry = Optional.empty();
        if ((key.needsRegistry() || value.needsRegistry()) && registryUrl == null) {
            throw new CommandLine.ParameterException(cli, (key.needsRegistry() ? "--key-format " + key.label()
                    : "--value-format " + value.label()) + " needs --schema-registry-url (a Confluent-API schema "
                    + "registry)");
        }
        if (validate && key != Format.JSON_SCHEMA && value != Format.JSON_SCHEMA) {
            throw new CommandLine.ParameterException(cli, "--validate checks JSON Schema records: it needs "
                    + "--key-format or --value-format json-schema");
        }
        if (registryUrl != null) {
            if (!registryUrl.matches("https?://.+")) {
                throw new CommandLine.ParameterException(cli, "invalid --schema-registry-url '"
                        + registryUrl + "': expected http://HOST:PORT[/PATH] or https://...");
            }
            registry = Optional.of(new JobDefinition.Registry(registryUrl, Optional.ofNullable(registryUser),
                    Optional.ofNullable(registryTokenFile).map(Path::toAbsolutePath),
                    Optional.ofNullable(registryTrustStore).map(Path::toAbsolutePath)));
        }
        Optional<dev.kbackfill.core.version.VersionField> field = Optional.empty();
        if (versionField != null) {
            try {
                field = Optional.of(dev.kbackfill.core.version.VersionField.parse(versionField));
            } catch (RequestException e) {
                throw new CommandLine.ParameterException(cli, e.getMessage());
            }
            if (!value.hasFields()) {
                throw new CommandLine.ParameterException(cli, "--version-field reads a field of the "
                        + "record value: it needs --value-format json, avro, protobuf or json-schema (a topic sink "
                        + "copies bytes unless told), not " + value.label());
            }
        }
        dev.kbackfill.core.record.ColumnMapping mapping;
        try {
            if (where != null) {
                dev.kbackfill.core.record.RecordFilter.compile(where); // a bad expression stops here, before any work
            }
            mapping = new dev.kbackfill.core.record.ColumnMapping(SinkOptions.split(columns),
                    dev.kbackfill.core.record.ColumnMapping.renames(renames), SinkOptions.split(headerColumns));
        } catch (RequestException e) {
            throw new CommandLine.ParameterException(cli, e.getMessage());
        }
        if (copiesRecords && !mapping.isNone()) {
            throw new CommandLine.ParameterException(cli, "this sink copies records as they are: --columns, "
                    + "--rename and --header-columns do not apply to it");
        }
        if (!value.hasFields() && !mapping.columns().isEmpty()) {
            throw new CommandLine.ParameterException(cli, "--columns chooses fields of the record value: it needs "
                    + "--value-format json, avro, protobuf or json-schema, not " + value.label());
        }
        return new JobDefinition.Decoding(key, value, keyColumn, valueColumn, SinkOptions.split(keyFields), registry,
                field, validate, Optional.ofNullable(where), mapping);
    }

}
