package dev.kbackfill.core.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.record.ColumnMapping;
import dev.kbackfill.core.record.RecordFilter;
import dev.kbackfill.core.record.SchemaDecoder;
import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.registry.RegistryException;
import dev.kbackfill.core.registry.SchemaRegistryClient;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.SinkTarget;
import dev.kbackfill.core.sink.JobSpec;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RequestException;

/**
 * A job as a value: everything a run of it is given, as plain data, from which every engine builds the same
 * reader settings, decoder, sink and policy for poison records. The command line parses its options into one;
 * the Spark engine receives one (with its plan frozen) and builds what its driver and tasks need from it, so that
 * a task writes exactly as the command line's run would. Written as JSON by {@link #toJson()}.
 *
 * <p>Secrets are not part of it: the sink's password comes from {@value #SINK_PASSWORD_ENV} (or the sink URL), the
 * registry's from {@value #REGISTRY_PASSWORD_ENV}, {@value #REGISTRY_TOKEN_ENV} or a token file, Kafka's from the
 * client settings file, all read where the value is used.
 *
 * @param name       the job name; empty derives it from the request and the sink
 * @param request    what was asked (a plan's own request when {@code plan} is given)
 * @param plan       a plan resolved earlier, run as it is (a plan file's, or the one a launch froze)
 * @param kafka      the source cluster's client settings
 * @param sink       the destination
 * @param decoding   how records become rows
 * @param poison     what a record that cannot be decoded does
 * @param strictTime write only records whose timestamp lies in the request's time window
 * @param limits     the run's rates and limits
 * @param batchRows  rows per batch; empty takes the sink's default
 * @param retryFor   how long transient failures are retried
 * @param engine     how the run executes, as the job's spec records it ({@code local}, {@code spark, N partitions
 *                   per wave})
 * @param liveWriter whether another writer keeps the target current ({@code --live-writer})
 */
public record JobDefinition(Optional<String> name, BackfillRequest request, Optional<Plan> plan, KafkaClient kafka,
                            SinkTarget sink, Decoding decoding, Poison poison, boolean strictTime, RunLimits limits,
                            OptionalInt batchRows, Duration retryFor, String engine, LiveWriter liveWriter) {

    /** A job whose live writer is found out when its sink opens ({@link LiveWriter#AUTO}). */
    public JobDefinition(Optional<String> name, BackfillRequest request, Optional<Plan> plan, KafkaClient kafka,
                         SinkTarget sink, Decoding decoding, Poison poison, boolean strictTime, RunLimits limits,
                         OptionalInt batchRows, Duration retryFor, String engine) {
        this(name, request, plan, kafka, sink, decoding, poison, strictTime, limits, batchRows, retryFor, engine,
                LiveWriter.AUTO);
    }

    public static final String SINK_PASSWORD_ENV = SinkTarget.PASSWORD_ENV;
    public static final String REGISTRY_PASSWORD_ENV = "KBACKFILL_SCHEMA_REGISTRY_PASSWORD";
    public static final String REGISTRY_TOKEN_ENV = "KBACKFILL_SCHEMA_REGISTRY_TOKEN";
    public static final String REGISTRY_TRUSTSTORE_PASSWORD_ENV = "KBACKFILL_SCHEMA_REGISTRY_TRUSTSTORE_PASSWORD";
    /** The version of the document {@link #toJson()} writes. */
    public static final int FORMAT_VERSION = 1;

    private static final ObjectMapper JSON = new ObjectMapper();

    public JobDefinition {
        Objects.requireNonNull(name, "name");
        request = plan.map(Plan::request).orElse(Objects.requireNonNull(request, "request"));
        Objects.requireNonNull(kafka, "kafka");
        Objects.requireNonNull(sink, "sink");
        Objects.requireNonNull(decoding, "decoding");
        Objects.requireNonNull(poison, "poison");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(batchRows, "batchRows");
        Objects.requireNonNull(retryFor, "retryFor");
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(liveWriter, "liveWriter");
    }

    /**
     * The source cluster's client settings: a properties file (read where they are used, so that its secrets stay in
     * it), then the settings given one by one, which override it, then defaults for what neither sets.
     *
     * @param file     {@code --command-config}
     * @param settings {@code -X}
     * @param defaults {@code --bootstrap-server} and the timeouts, unless set otherwise
     */
    public record KafkaClient(Optional<Path> file, Map<String, String> settings, Map<String, String> defaults) {
        public KafkaClient {
            Objects.requireNonNull(file, "file");
            settings = Map.copyOf(settings);
            defaults = Map.copyOf(defaults);
        }

        /**
         * The client settings: the file's, then {@link #settings()}, then {@link #defaults()} where neither set one.
         *
         * @throws RequestException the file cannot be read, or a {@code group.id} is set: reading never joins or
         *                          commits to a consumer group
         */
        public Map<String, Object> config() {
            Map<String, Object> config = new HashMap<>();
            file.ifPresent(f -> {
                config.putAll(dev.kbackfill.resolver.ClientConfigs.fromFile("--command-config", f));
                refuseGroup(config, "--command-config " + f);
            });
            refuseGroup(settings, "-X");
            config.putAll(settings);
            defaults.forEach(config::putIfAbsent);
            return config;
        }

        private static void refuseGroup(Map<String, ?> config, String where) {
            if (config.containsKey("group.id")) {
                throw new RequestException("group.id '" + config.get("group.id") + "' (from " + where + ") is not "
                        + "allowed: kbackfill never joins or commits to a consumer group; remove it");
            }
        }
    }

    /**
     * How records become rows.
     *
     * @param keyFormat   the key's format
     * @param valueFormat the value's format
     * @param keyColumn   the column of a key that is not an object
     * @param valueColumn the column of a value that is not an object
     * @param keyFields   value fields keying rows instead of the record key (empty: the record key)
     * @param registry    the schema registry, for Avro, Protobuf and JSON Schema
     * @param versionField the value field that orders versions first ({@code --version-field}), if any
     * @param validate    check JSON Schema records against their schema ({@code --validate}), a failure being a
     *                    poison record
     * @param where       the records kept ({@code --where}, a CEL expression), if not all
     * @param mapping     which fields become which columns ({@code --columns}, {@code --rename},
     *                    {@code --header-columns})
     */
    public record Decoding(Format keyFormat, Format valueFormat, String keyColumn, String valueColumn,
                           List<String> keyFields, Optional<Registry> registry,
                           Optional<dev.kbackfill.core.version.VersionField> versionField, boolean validate,
                           Optional<String> where, ColumnMapping mapping) {
        public Decoding {
            Objects.requireNonNull(keyFormat, "keyFormat");
            Objects.requireNonNull(valueFormat, "valueFormat");
            keyFields = List.copyOf(keyFields);
            Objects.requireNonNull(registry, "registry");
            Objects.requireNonNull(versionField, "versionField");
            Objects.requireNonNull(where, "where");
            Objects.requireNonNull(mapping, "mapping");
        }

        /**
         * Whether keys come typed: a structured key format, or value fields ({@code --key-fields}), where the key
         * {@code 8} is a number and {@code "8"} text, two keys; the string and bytes formats give text or bytes only.
         */
        public boolean typedKeys() {
            return !keyFields.isEmpty() || keyFormat != Format.STRING && keyFormat != Format.BYTES;
        }

        /** Without filter or mapping. */
        public Decoding(Format keyFormat, Format valueFormat, String keyColumn, String valueColumn,
                        List<String> keyFields, Optional<Registry> registry,
                        Optional<dev.kbackfill.core.version.VersionField> versionField, boolean validate) {
            this(keyFormat, valueFormat, keyColumn, valueColumn, keyFields, registry, versionField, validate,
                    Optional.empty(), ColumnMapping.none());
        }

        /** Without validation, filter or mapping. */
        public Decoding(Format keyFormat, Format valueFormat, String keyColumn, String valueColumn,
                        List<String> keyFields, Optional<Registry> registry,
                        Optional<dev.kbackfill.core.version.VersionField> versionField) {
            this(keyFormat, valueFormat, keyColumn, valueColumn, keyFields, registry, versionField, false);
        }

        /** Without a version field. */
        public Decoding(Format keyFormat, Format valueFormat, String keyColumn, String valueColumn,
                        List<String> keyFields, Optional<Registry> registry) {
            this(keyFormat, valueFormat, keyColumn, valueColumn, keyFields, registry, Optional.empty());
        }

        /** The command line's default: string keys, JSON values. */
        public static Decoding defaults() {
            return new Decoding(Format.STRING, Format.JSON, "kafka_key", "value", List.of(), Optional.empty());
        }
    }

    /**
     * A Confluent-API schema registry.
     *
     * @param url        its base URL
     * @param user       a basic-auth user (the password from {@value #REGISTRY_PASSWORD_ENV})
     * @param tokenFile  a file holding a bearer token (else {@value #REGISTRY_TOKEN_ENV})
     * @param trustStore a trust store for its certificate (its password from {@value #REGISTRY_TRUSTSTORE_PASSWORD_ENV})
     */
    public record Registry(String url, Optional<String> user, Optional<Path> tokenFile, Optional<Path> trustStore) {
        public Registry {
            Objects.requireNonNull(url, "url");
            Objects.requireNonNull(user, "user");
            Objects.requireNonNull(tokenFile, "tokenFile");
            Objects.requireNonNull(trustStore, "trustStore");
        }

        /** A client of it, with its secrets read from the environment and files now. */
        public SchemaRegistryClient client() {
            return SchemaRegistryClient.create(url, authorization(), trustStore.map(Registry::tls), Duration.ofSeconds(30));
        }

        private Optional<String> authorization() {
            String token = System.getenv(REGISTRY_TOKEN_ENV);
            if (tokenFile.isPresent()) {
                try {
                    token = Files.readString(tokenFile.get()).strip();
                } catch (IOException e) {
                    throw new RequestException("cannot read --schema-registry-token-file '" + tokenFile.get() + "': "
                            + (e instanceof NoSuchFileException ? "no such file" : e.getMessage()));
                }
            }
            if (token != null && !token.isBlank()) {
                if (user.isPresent()) {
                    throw new RequestException("--schema-registry-user and a bearer token (--schema-registry-token-file "
                            + "or $" + REGISTRY_TOKEN_ENV + ") exclude each other: use one");
                }
                return Optional.of(SchemaRegistryClient.bearer(token));
            }
            return user.map(u -> SchemaRegistryClient.basicAuth(u,
                    Optional.ofNullable(System.getenv(REGISTRY_PASSWORD_ENV)).orElse("")));
        }

        private static javax.net.ssl.SSLContext tls(Path trustStore) {
            try {
                return SchemaRegistryClient.trusting(trustStore,
                        Optional.ofNullable(System.getenv(REGISTRY_TRUSTSTORE_PASSWORD_ENV)).orElse("").toCharArray());
            } catch (RegistryException e) {
                throw new RequestException("invalid --schema-registry-truststore '" + trustStore + "': "
                        + e.getMessage() + " (expected a PKCS12 or JKS trust store; its password in $"
                        + REGISTRY_TRUSTSTORE_PASSWORD_ENV + ")");
            }
        }
    }

    /**
     * What a record that cannot be decoded does.
     *
     * @param skip       skip it (count it as rejected) instead of failing the run
     * @param deadLetter where it is kept, raw: a JSON-lines file, or {@code topic:NAME}
     */
    public record Poison(boolean skip, Optional<String> deadLetter) {
        public static final Poison FAIL = new Poison(false, Optional.empty());

        public Poison {
            Objects.requireNonNull(deadLetter, "deadLetter");
        }
    }

    /** The source's client settings ({@link KafkaClient#config()}). */
    public Map<String, Object> kafkaConfig() {
        return kafka.config();
    }

    /** The sink's settings, with the password from {@value #SINK_PASSWORD_ENV}. */
    public SinkSettings sinkSettings() {
        return sinkSettings(kafkaConfig());
    }

    /** The sink's settings, the source's client settings being {@code sourceConfig}. */
    public SinkSettings sinkSettings(Map<String, Object> sourceConfig) {
        return sink.settings(request.topic(), sourceConfig).withVersionField(decoding.versionField())
                .withMapping(decoding.mapping()).withEngineWrites(engine.startsWith("spark"))
                .withTypedKeys(decoding.typedKeys());
    }

    /** A new decoder (with a registry client of its own where a format needs one). */
    public RecordDecoder decoder() {
        SchemaRegistryClient client = null;
        if (decoding.keyFormat().needsRegistry() || decoding.valueFormat().needsRegistry()) {
            Format f = decoding.keyFormat().needsRegistry() ? decoding.keyFormat() : decoding.valueFormat();
            client = decoding.registry().orElseThrow(() -> new RequestException((f == decoding.keyFormat()
                    ? "--key-format " : "--value-format ") + f.label() + " needs --schema-registry-url (a "
                    + "Confluent-API schema registry)")).client();
        }
        SchemaDecoder key = decoding.keyFormat().needsRegistry()
                ? SchemaDecoder.of(decoding.keyFormat(), client, decoding.validate()) : null;
        SchemaDecoder value = decoding.valueFormat().needsRegistry()
                ? SchemaDecoder.of(decoding.valueFormat(), client, decoding.validate()) : null;
        return new RecordDecoder(decoding.keyFormat(), decoding.valueFormat(), decoding.keyColumn(),
                decoding.valueColumn(), decoding.keyFields(), key, value, decoding.versionField().orElse(null))
                .withShaping(decoding.where().map(RecordFilter::compile).orElse(null), decoding.mapping());
    }

    /** A new policy for records that cannot be decoded (to close after use), with {@code sourceConfig} for a topic. */
    public Rejects rejects(Map<String, Object> sourceConfig) {
        if (poison.deadLetter().isEmpty()) {
            return poison.skip() ? Rejects.skip() : Rejects.fail();
        }
        String to = poison.deadLetter().get();
        return to.startsWith("topic:") ? Rejects.toTopic(sourceConfig, to.substring("topic:".length()))
                : Rejects.toFile(Path.of(to).toAbsolutePath());
    }

    /** A new policy for records that cannot be decoded (to close after use). */
    public Rejects rejects() {
        return rejects(kafkaConfig());
    }

    /**
     * The settings of a run of this job, decoding with {@code decoder} and sending poison records to
     * {@code rejects}; a builder, for an engine to narrow (a sub-job's name, its retries).
     */
    public BackfillJob.Builder settings(RecordDecoder decoder, Rejects rejects) {
        BackfillJob.Builder builder = BackfillJob.Settings.builder(request, kafkaConfig())
                .decoder(decoder, decoding.keyFields())
                .modes(sink.conflict(), sink.tombstones()).rejects(rejects)
                .options(RunOptions.DEFAULTS.withStrictTime(strictTime).withLimits(limits).withLiveWriter(liveWriter))
                .retryFor(retryFor)
                .engine(engine);
        name.ifPresent(builder::job);
        plan.ifPresent(builder::plan);
        batchRows.ifPresent(builder::batchRows);
        return builder.definition(toStored());
    }

    /** This job with {@code plan} frozen: a run of it runs exactly that plan. */
    public JobDefinition withPlan(Plan plan) {
        return new JobDefinition(name, plan.request(), Optional.of(plan), kafka, sink, decoding, poison, strictTime,
                limits, batchRows, retryFor, engine, liveWriter);
    }

    public JobDefinition withName(String name) {
        return new JobDefinition(Optional.of(name), request, plan, kafka, sink, decoding, poison, strictTime, limits,
                batchRows, retryFor, engine, liveWriter);
    }

    /**
     * A job of {@code request} into {@code sink} with the command line's defaults for the rest: its name derived from
     * the request and the sink, string keys and JSON values, a record that cannot be decoded failing the run, no
     * limits, the sink's batch size, transient failures retried for five minutes, run in this process.
     *
     * @param kafka the source cluster's client settings ({@code bootstrap.servers} at least)
     */
    public static JobDefinition of(BackfillRequest request, Map<String, String> kafka, SinkTarget sink) {
        return new JobDefinition(Optional.empty(), request, Optional.empty(),
                new KafkaClient(Optional.empty(), kafka, Map.of()), sink, Decoding.defaults(), Poison.FAIL, false,
                RunLimits.NONE, OptionalInt.empty(), Duration.ofMinutes(5), JobSpec.LOCAL);
    }

    /** This job with batches of {@code rows} rows (distinct keys). */
    public JobDefinition withBatchRows(int rows) {
        if (rows < 1) {
            throw new RequestException("invalid --batch-size '" + rows + "': expected a whole number >= 1");
        }
        return new JobDefinition(name, request, plan, kafka, sink, decoding, poison, strictTime, limits,
                OptionalInt.of(rows), retryFor, engine, liveWriter);
    }

    /** This job run by {@code engine}, as the job's spec records it ({@link JobSpec#ENGINE}). */
    public JobDefinition withEngine(String engine) {
        return new JobDefinition(name, request, plan, kafka, sink, decoding, poison, strictTime, limits, batchRows,
                retryFor, engine, liveWriter);
    }

    /** The job writing another target (a shadow of its own, {@link dev.kbackfill.core.sink.Publication}). */
    public JobDefinition writingTo(dev.kbackfill.core.sink.SinkTarget other) {
        return new JobDefinition(name, request, plan, kafka, other, decoding, poison, strictTime, limits,
                batchRows, retryFor, engine, liveWriter);
    }

    /** This job beside a live writer as {@code writer} says ({@code --live-writer}). */
    public JobDefinition withLiveWriter(LiveWriter writer) {
        return new JobDefinition(name, request, plan, kafka, sink, decoding, poison, strictTime, limits, batchRows,
                retryFor, engine, writer);
    }

    /** The value as JSON; it needs a plan (a request alone is resolved where it is run, not where it is written). */
    public String toJson() {
        return toNode().toPrettyString();
    }

    /** The value as a JSON tree ({@link #toJson()}). */
    public ObjectNode toNode() {
        Plan frozen = plan.orElseThrow(() -> new IllegalStateException("a job is written with its plan frozen"));
        ObjectNode root = JSON.createObjectNode();
        root.put("kbackfill-job", FORMAT_VERSION);
        name.ifPresent(n -> root.put("name", n));
        try {
            root.set("plan", JSON.readTree(frozen.toJson()));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return settingsNode(root, kafka.settings());
    }

    /**
     * How the job's runs are set up, for the job's stored spec ({@link dev.kbackfill.core.sink.JobSpec#DEFINITION}):
     * this value as JSON without a plan (each run stores its own), without any client setting that looks like a
     * credential (those stay in the {@code --command-config} file, whose path is kept) and with the sink URL's
     * credentials masked. {@link #fromStored} reads it.
     */
    public String toStored() {
        ObjectNode root = JSON.createObjectNode();
        root.put("kbackfill-job", FORMAT_VERSION);
        name.ifPresent(n -> root.put("name", n));
        Map<String, String> settings = new HashMap<>();
        kafka.settings().forEach((key, value) -> {
            if (!dev.kbackfill.resolver.ClientConfigs.isCredential(key)) {
                settings.put(key, value);
            }
        });
        ObjectNode node = settingsNode(root, settings);
        ((ObjectNode) node.get("sink")).put("url", dev.kbackfill.core.sink.SinkFactory.redact(sink.url()));
        return node.toString();
    }

    /** A job stored by {@link #toStored()}, with the plan of the run to judge. */
    public static JobDefinition fromStored(String json, Plan plan) {
        try {
            ObjectNode root = (ObjectNode) JSON.readTree(json);
            root.set("plan", JSON.readTree(plan.toJson()));
            return fromNode(root);
        } catch (IOException | ClassCastException e) {
            throw new RequestException("invalid stored job: " + e.getMessage());
        }
    }

    private ObjectNode settingsNode(ObjectNode root, Map<String, String> kafkaSettings) {
        ObjectNode k = root.putObject("kafka");
        kafka.file().ifPresent(f -> k.put("file", f.toString()));
        k.set("settings", JSON.valueToTree(new java.util.TreeMap<>(kafkaSettings)));
        k.set("defaults", JSON.valueToTree(new java.util.TreeMap<>(kafka.defaults())));
        ObjectNode s = root.putObject("sink");
        s.put("url", sink.url());
        s.put("table", sink.table());
        sink.user().ifPresent(u -> s.put("user", u));
        s.put("onConflict", sink.conflict().label());
        s.put("onTombstone", sink.tombstones().label());
        s.put("createTable", sink.createTable());
        s.put("ignoreUnknownFields", sink.ignoreUnknownFields());
        s.put("evolveSchema", sink.evolveSchema());
        s.put("keysDistinctInCollation", sink.keysDistinctInCollation());
        sink.clientFile().ifPresent(f -> s.put("clientFile", f.toString()));
        s.set("client", JSON.valueToTree(new java.util.TreeMap<>(sink.client())));
        s.set("tableProperties", JSON.valueToTree(new java.util.TreeMap<>(sink.tableProperties())));
        if (!sink.partitionBy().isEmpty()) {
            s.set("partitionBy", JSON.valueToTree(sink.partitionBy()));
        }
        ObjectNode d = root.putObject("decoding");
        d.put("keyFormat", decoding.keyFormat().label());
        d.put("valueFormat", decoding.valueFormat().label());
        d.put("keyColumn", decoding.keyColumn());
        d.put("valueColumn", decoding.valueColumn());
        d.set("keyFields", JSON.valueToTree(decoding.keyFields()));
        decoding.registry().ifPresent(r -> {
            ObjectNode reg = d.putObject("registry");
            reg.put("url", r.url());
            r.user().ifPresent(u -> reg.put("user", u));
            r.tokenFile().ifPresent(f -> reg.put("tokenFile", f.toString()));
            r.trustStore().ifPresent(f -> reg.put("trustStore", f.toString()));
        });
        decoding.versionField().ifPresent(f -> d.put("versionField", f.label()));
        d.put("validate", decoding.validate());
        decoding.where().ifPresent(w -> d.put("where", w));
        if (!decoding.mapping().isNone()) {
            ObjectNode m = d.putObject("mapping");
            m.set("columns", JSON.valueToTree(decoding.mapping().columns()));
            m.set("rename", JSON.valueToTree(decoding.mapping().renames()));
            m.set("headerColumns", JSON.valueToTree(decoding.mapping().headerColumns()));
        }
        ObjectNode p = root.putObject("onError");
        p.put("skip", poison.skip());
        poison.deadLetter().ifPresent(t -> p.put("deadLetter", t));
        root.put("strictTime", strictTime);
        ObjectNode l = root.putObject("limits");
        l.put("maxRecords", limits.maxRecords());
        l.put("maxDuration", limits.maxDuration().toString());
        l.put("recordsPerSecond", limits.recordsPerSecond());
        l.put("bytesPerSecond", limits.bytesPerSecond());
        batchRows.ifPresent(b -> root.put("batchRows", b));
        root.put("retryFor", retryFor.toString());
        root.put("engine", engine);
        root.put("liveWriter", liveWriter.label());
        return root;
    }

    /** @throws RequestException for a document that is not a job of this version */
    public static JobDefinition fromJson(String json) {
        try {
            return fromNode(JSON.readTree(json));
        } catch (IOException e) {
            throw new RequestException("invalid job: " + e.getMessage());
        }
    }

    private static ColumnMapping mapping(JsonNode m) {
        if (!m.isObject()) {
            return ColumnMapping.none();
        }
        List<String> columns = new ArrayList<>();
        m.path("columns").forEach(c -> columns.add(c.asText()));
        Map<String, String> renames = new LinkedHashMap<>();
        m.path("rename").fields().forEachRemaining(e -> renames.put(e.getKey(), e.getValue().asText()));
        List<String> headers = new ArrayList<>();
        m.path("headerColumns").forEach(c -> headers.add(c.asText()));
        return new ColumnMapping(columns, renames, headers);
    }

    /** @throws RequestException for a tree that is not a job of this version */
    public static JobDefinition fromNode(JsonNode root) {
        if (root.path("kbackfill-job").asInt(-1) != FORMAT_VERSION) {
            throw new RequestException("invalid job: expected a kbackfill job of version " + FORMAT_VERSION);
        }
        try {
            Plan plan = Plan.fromJson(required(root, "plan").toString());
            JsonNode k = required(root, "kafka");
            JsonNode s = required(root, "sink");
            JsonNode d = required(root, "decoding");
            JsonNode p = required(root, "onError");
            JsonNode l = required(root, "limits");
            JsonNode reg = d.path("registry");
            Optional<Registry> registry = reg.isObject()
                    ? Optional.of(new Registry(reg.path("url").asText(), text(reg, "user"),
                    text(reg, "tokenFile").map(Path::of), text(reg, "trustStore").map(Path::of)))
                    : Optional.empty();
            List<String> keyFields = new ArrayList<>();
            d.path("keyFields").forEach(f -> keyFields.add(f.asText()));
            return new JobDefinition(text(root, "name"), plan.request(), Optional.of(plan),
                    new KafkaClient(text(k, "file").map(Path::of), map(k.path("settings")), map(k.path("defaults"))),
                    new SinkTarget(s.path("url").asText(), s.path("table").asText(), text(s, "user"),
                            ConflictMode.parse(s.path("onConflict").asText()),
                            TombstoneMode.parse(s.path("onTombstone").asText()), s.path("createTable").asBoolean(),
                            s.path("ignoreUnknownFields").asBoolean(), text(s, "clientFile").map(Path::of),
                            map(s.path("client")), map(s.path("tableProperties")), s.path("evolveSchema").asBoolean(false),
                            strings(s.path("partitionBy")), s.path("keysDistinctInCollation").asBoolean(false)),
                    new Decoding(Format.parse("keyFormat", d.path("keyFormat").asText()),
                            Format.parse("valueFormat", d.path("valueFormat").asText()), d.path("keyColumn").asText(),
                            d.path("valueColumn").asText(), keyFields, registry,
                            text(d, "versionField").map(dev.kbackfill.core.version.VersionField::parse),
                            d.path("validate").asBoolean(false), text(d, "where"), mapping(d.path("mapping"))),
                    new Poison(p.path("skip").asBoolean(), text(p, "deadLetter")),
                    root.path("strictTime").asBoolean(),
                    new RunLimits(l.path("maxRecords").asLong(), Duration.parse(l.path("maxDuration").asText("PT0S")),
                            l.path("recordsPerSecond").asLong(), l.path("bytesPerSecond").asLong()),
                    root.has("batchRows") ? OptionalInt.of(root.get("batchRows").asInt()) : OptionalInt.empty(),
                    Duration.parse(root.path("retryFor").asText("PT5M")), root.path("engine").asText("local"),
                    LiveWriter.parse(root.path("liveWriter").asText("auto")));
        } catch (RuntimeException e) {
            if (e instanceof RequestException re) {
                throw new RequestException("invalid job: " + re.getMessage());
            }
            throw new RequestException("invalid job: " + e.getMessage());
        }
    }

    private static JsonNode required(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            throw new RequestException("missing '" + field + "'");
        }
        return v;
    }

    private static Optional<String> text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v == null || v.isNull() ? Optional.empty() : Optional.of(v.asText());
    }

    private static List<String> strings(JsonNode node) {
        List<String> values = new ArrayList<>();
        node.forEach(v -> values.add(v.asText()));
        return values;
    }

    private static Map<String, String> map(JsonNode node) {
        Map<String, String> m = new LinkedHashMap<>();
        node.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().asText()));
        return m;
    }
}
