package dev.kbackfill.resolver;

import static dev.kbackfill.resolver.Wording.Term.*;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.regex.Pattern;

import org.apache.kafka.common.IsolationLevel;

/**
 * What the user asked for: a topic, the two bounds as typed and as parsed, and the options that change how they
 * resolve. Build one with {@link #builder(String)}; {@link RangeResolver#resolve} turns it into a {@link Plan}.
 *
 * @param topic          the topic to backfill
 * @param fromText       {@code --from} as typed (kept so a stored plan shows what was asked)
 * @param toText         {@code --to} as typed
 * @param from           {@code fromText} parsed
 * @param to             {@code toText} parsed
 * @param zone           the zone of dates and local date-times in the bounds
 * @param partitions     the partitions to include; empty means every partition of the topic (or those named
 *                       by a Spark JSON bound)
 * @param isolationLevel the reader's isolation level; the end offset is the last stable offset under
 *                       {@code READ_COMMITTED}
 * @param allowDataLoss  whether a range that starts below the log start is clamped (with a note) instead of
 *                       rejected with a {@link DataLossException}
 * @param readers        how to reach the readers a bound names ({@code checkpoint:}, {@code connect:}): {@value
 *                       #CONNECT_URL} for a Kafka Connect worker's REST API, and a checkpoint filesystem's settings
 *                       ({@code fs.s3a.endpoint}); never credentials, which come from the environment
 */
public record BackfillRequest(String topic, String fromText, String toText, Bound from, Bound to, ZoneId zone,
                              Optional<SortedSet<Integer>> partitions, IsolationLevel isolationLevel,
                              boolean allowDataLoss, Map<String, String> readers) {

    /** The reader setting naming a Kafka Connect worker's REST API, for {@code connect:NAME} bounds. */
    public static final String CONNECT_URL = "connect.url";

    /** The reader setting naming where a connector archived the topic ({@link Archive}): a folder or a URL. */
    public static final String ARCHIVE_URL = "archive.url";

    /**
     * The reader setting ({@code true}) that lets a range read archived records whose offsets are inferred from their
     * files' names ({@link Archive.Extent#exactOffsets()} false).
     */
    public static final String ARCHIVE_INFERRED_OFFSETS = "archive.inferred-offsets";

    /**
     * The reader setting naming the fields of an archive's CSV files in their order (Aiven's
     * {@code format.output.fields}: {@code key}, {@code value}, {@code offset}, {@code timestamp}, {@code headers}).
     */
    public static final String ARCHIVE_FIELDS = "archive.fields";

    /** The fields {@value #ARCHIVE_FIELDS} may name. */
    public static final java.util.List<String> ARCHIVE_FIELD_NAMES = java.util.List.of("key", "value", "offset",
            "timestamp", "headers");

    private static final Pattern LEGAL_TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    public BackfillRequest {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        Objects.requireNonNull(zone, "zone");
        Objects.requireNonNull(partitions, "partitions");
        Objects.requireNonNull(isolationLevel, "isolationLevel");
        partitions = partitions.map(java.util.Collections::unmodifiableSortedSet);
        readers = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(readers));
    }

    /** A request without reader settings. */
    public BackfillRequest(String topic, String fromText, String toText, Bound from, Bound to, ZoneId zone,
                           Optional<SortedSet<Integer>> partitions, IsolationLevel isolationLevel,
                           boolean allowDataLoss) {
        this(topic, fromText, toText, from, to, zone, partitions, isolationLevel, allowDataLoss, Map.of());
    }

    public static Builder builder(String topic) {
        return new Builder(topic);
    }

    /** The same request from another bound (the text as given stays: it names the request). */
    public BackfillRequest withFrom(Bound bound) {
        return new BackfillRequest(topic, fromText, toText, bound, to, zone, partitions, isolationLevel, allowDataLoss,
                readers);
    }

    public BackfillRequest withTo(Bound bound) {
        return new BackfillRequest(topic, fromText, toText, from, bound, zone, partitions, isolationLevel, allowDataLoss,
                readers);
    }

    /** Where a connector archived the topic ({@value #ARCHIVE_URL}), if the request reads an archive. */
    public Optional<String> archive() {
        return Optional.ofNullable(readers.get(ARCHIVE_URL));
    }

    /** Whether archived records whose offsets are inferred from file names may be read. */
    public boolean allowInferredOffsets() {
        return Boolean.parseBoolean(readers.get(ARCHIVE_INFERRED_OFFSETS));
    }

    /** The fields of the archive's CSV files, in order ({@value #ARCHIVE_FIELDS}); empty where not given. */
    public java.util.List<String> archiveFields() {
        String fields = readers.get(ARCHIVE_FIELDS);
        return fields == null ? java.util.List.of() : archiveFields(fields);
    }

    /**
     * {@code text} as a list of archive fields ({@value #ARCHIVE_FIELDS}).
     *
     * @throws RequestException for a name not in {@link #ARCHIVE_FIELD_NAMES}, a name twice, or none
     */
    public static java.util.List<String> archiveFields(String text) {
        java.util.List<String> fields = java.util.Arrays.stream(text.split(",")).map(String::strip).toList();
        for (String f : fields) {
            if (!ARCHIVE_FIELD_NAMES.contains(f) || fields.indexOf(f) != fields.lastIndexOf(f)) {
                throw new RequestException("invalid " + Wording.Term.ARCHIVE_FIELDS + " '" + text + "': "
                        + (f.isEmpty() ? "a field is empty" : ARCHIVE_FIELD_NAMES.contains(f) ? f + " is named twice"
                        : f + " is not a field") + "; expected the connector's format.output.fields in order, "
                        + "comma-separated, of " + String.join(", ", ARCHIVE_FIELD_NAMES));
            }
        }
        return fields;
    }

    /** Whether resolving the same request later can give a different plan ({@code latest}, relative times). */
    public boolean moving() {
        return from.moving() || to.moving();
    }

    /**
     * Checks what can be checked without the cluster: both bounds point at the topic, and {@code from} does not
     * lie after {@code to} where both are times or both are offsets.
     *
     * @param now the moment relative times are measured from
     */
    public void validate(Instant now) {
        checkJsonTopic(FROM, from);
        checkJsonTopic(TO, to);
        Optional<Instant> fromTime = from.instant(now);
        Optional<Instant> toTime = to.instant(now);
        if (fromTime.isPresent() && toTime.isPresent() && fromTime.get().isAfter(toTime.get())) {
            throw new RequestException(FROM + " '" + fromText + "' (" + fromTime.get() + ") is after " + TO + " '" + toText
                    + "' (" + toTime.get() + "); the range is [from, to)");
        }
        if (from instanceof Bound.AtOffset f && to instanceof Bound.AtOffset t && f.offset() > t.offset()) {
            throw new RequestException(FROM + " '" + fromText + "' is after " + TO + " '" + toText
                    + "'; the range is [from, to)");
        }
        if (from instanceof Bound.Latest && to instanceof Bound.Earliest) {
            throw new RequestException(FROM + " latest is after " + TO + " earliest; the range is [from, to)");
        }
        if (from instanceof Bound.PerPartition f && to instanceof Bound.PerPartition t
                && !f.positions().keySet().equals(t.positions().keySet())) {
            throw new RequestException(FROM + " names partitions " + f.positions().keySet() + " but " + TO + " names "
                    + t.positions().keySet() + "; Spark JSON on both sides must name the same partitions");
        }
    }

    /**
     * Reader settings (see {@link Builder#readers}) checked, sorted and unmodifiable.
     *
     * @throws RequestException for a credential, or a {@value #CONNECT_URL} that is not a worker's REST address
     */
    public static java.util.SortedMap<String, String> checkedReaders(Map<String, String> settings) {
        settings.forEach(BackfillRequest::checkReaderSetting);
        return java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(settings));
    }

    private static void checkReaderSetting(String key, String value) {
        if (ClientConfigs.isCredential(key)) {
            throw new RequestException("invalid " + READER_SETTING + " '" + key + "': it looks like a credential, which "
                    + "is never stored with a plan or a job; give it in the environment (AWS_ACCESS_KEY_ID, "
                    + "AWS_SECRET_ACCESS_KEY, AWS's default chain)");
        }
        if (key.equals(ARCHIVE_URL)) {
            checkArchive(value);
        }
        if (key.equals(ARCHIVE_FIELDS)) {
            archiveFields(value);
        }
        if (key.equals(ARCHIVE_INFERRED_OFFSETS) && !value.equals("true") && !value.equals("false")) {
            throw new RequestException("invalid " + READER_SETTING + " " + ARCHIVE_INFERRED_OFFSETS + " '" + value
                    + "': expected true or false");
        }
        if (key.equals(CONNECT_URL)) {
            java.net.URI uri;
            try {
                uri = new java.net.URI(value);
            } catch (java.net.URISyntaxException e) {
                uri = null;
            }
            if (uri == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
                    || uri.getHost() == null) {
                throw new RequestException("invalid " + Wording.Term.CONNECT_URL + " '" + value + "': expected a Kafka Connect worker's "
                        + "REST address, http://HOST:PORT or https://HOST:PORT");
            }
            if (uri.getUserInfo() != null) {
                throw new RequestException("invalid " + Wording.Term.CONNECT_URL + " '" + uri.getScheme() + "://***@" + uri.getHost()
                        + "': credentials in the URL would be stored with the plan; kbackfill reads Connect's REST "
                        + "API without authentication");
            }
        }
    }

    private static void checkArchive(String value) {
        java.net.URI uri = null;
        try {
            uri = value.contains("://") ? new java.net.URI(value) : null;
        } catch (java.net.URISyntaxException e) {
            throw new RequestException("invalid " + Wording.Term.ARCHIVE + " '" + value + "': expected a folder, "
                    + "file:///PATH or s3a://BUCKET/PREFIX");
        }
        if (value.isBlank() || (uri != null && uri.getScheme() == null)) {
            throw new RequestException("invalid " + Wording.Term.ARCHIVE + " '" + value + "': expected a folder, "
                    + "file:///PATH or s3a://BUCKET/PREFIX");
        }
        if (uri != null && uri.getUserInfo() != null) {
            throw new RequestException("invalid " + Wording.Term.ARCHIVE + " '" + uri.getScheme() + "://***@"
                    + uri.getHost() + "': credentials in the URL would be stored with the plan; give them in the "
                    + "environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS's default chain)");
        }
    }

    private void checkJsonTopic(Wording.Term option, Bound bound) {
        if (bound instanceof Bound.PerPartition p && !p.topic().equals(topic)) {
            throw new RequestException(option + " names topic '" + p.topic() + "' but " + TOPIC + " is '" + topic
                    + "'; Spark JSON must be keyed by the topic being backfilled");
        }
    }

    /** Builds a {@link BackfillRequest}, parsing bound text with {@link BoundParser}. */
    public static final class Builder {
        private final String topic;
        private String fromText;
        private String toText;
        private ZoneId zone = ZoneOffset.UTC;
        private SortedSet<Integer> partitions;
        private IsolationLevel isolationLevel = IsolationLevel.READ_COMMITTED;
        private boolean allowDataLoss;
        private Map<String, String> readers = Map.of();
        private String archive;
        private String archiveFields;
        private boolean allowInferredOffsets;

        private Builder(String topic) {
            this.topic = topic;
        }

        /** Where the range starts, in any form {@link BoundParser} accepts, e.g. {@code 2024-01-01}. */
        public Builder from(String text) {
            this.fromText = text;
            return this;
        }

        /** Where the range ends (exclusive), in any form {@link BoundParser} accepts. */
        public Builder to(String text) {
            this.toText = text;
            return this;
        }

        /** The zone of dates and local date-times; UTC unless set. */
        public Builder zone(ZoneId zone) {
            this.zone = Objects.requireNonNull(zone, "zone");
            return this;
        }

        /** Restricts the plan to these partitions. */
        public Builder partitions(SortedSet<Integer> partitions) {
            this.partitions = partitions;
            return this;
        }

        /** {@code READ_COMMITTED} (the default) or {@code READ_UNCOMMITTED}. */
        public Builder isolationLevel(IsolationLevel level) {
            this.isolationLevel = Objects.requireNonNull(level, "isolationLevel");
            return this;
        }

        /** Clamp ranges that start below the log start instead of failing. */
        public Builder allowDataLoss(boolean allow) {
            this.allowDataLoss = allow;
            return this;
        }

        /**
         * How to reach the readers a bound names: {@value #CONNECT_URL} (a Kafka Connect worker's REST API, e.g.
         * {@code http://connect:8083}) and the settings of a checkpoint's filesystem ({@code fs.s3a.endpoint}).
         * Credentials are refused: they come from the environment (AWS's default chain).
         */
        public Builder readers(Map<String, String> settings) {
            this.readers = Map.copyOf(settings);
            return this;
        }

        /**
         * Where a connector archived the topic (a folder, {@code file:///PATH} or {@code s3a://BUCKET/PREFIX}): the
         * range may start below the log start, its older part read from the archive ({@link Archive}). The
         * archive's filesystem settings are {@link #readers} settings.
         */
        public Builder archive(String location) {
            this.archive = location;
            return this;
        }

        /**
         * The fields of the archive's CSV files, in their order: Aiven's {@code format.output.fields} (e.g.
         * {@code key,value,offset,timestamp}), which CSV lines do not name.
         */
        public Builder archiveFields(String fields) {
            this.archiveFields = fields;
            return this;
        }

        /** Read archived records whose offsets are inferred from their files' names (Confluent's layout). */
        public Builder allowInferredOffsets(boolean allow) {
            this.allowInferredOffsets = allow;
            return this;
        }

        /**
         * Parses and checks the request.
         *
         * @throws RequestException naming the bad value and the accepted forms
         */
        public BackfillRequest build() {
            BackfillRequest request = parse();
            request.validate(RangeResolver.systemClock().instant());
            return request;
        }

        /** Parses without the checks that depend on the current time: for requests read back from a stored plan. */
        BackfillRequest buildStored() {
            return parse();
        }

        private BackfillRequest parse() {
            if (topic == null || !LEGAL_TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals("..")) {
                throw new RequestException("invalid " + TOPIC + " '" + topic + "': a topic name is 1 to 249 of "
                        + "a-z A-Z 0-9 . _ -");
            }
            if (fromText == null) {
                throw new RequestException("missing " + FROM + ": say where the backfill starts (" + BoundParser.ACCEPTED_FORMS
                        + ")");
            }
            if (toText == null) {
                throw new RequestException("missing " + TO + ": say where the backfill ends, exclusive ("
                        + BoundParser.ACCEPTED_FORMS + ")");
            }
            Bound from = BoundParser.parse(FROM.toString(), fromText, zone);
            Bound to = BoundParser.parse(TO.toString(), toText, zone);
            if (partitions != null && partitions.isEmpty()) {
                throw new RequestException("invalid " + PARTITIONS + ": the set is empty");
            }
            Map<String, String> settings = new java.util.HashMap<>(readers);
            if (archive != null) {
                settings.put(ARCHIVE_URL, archive.strip());
            }
            if (allowInferredOffsets) {
                settings.put(ARCHIVE_INFERRED_OFFSETS, "true");
            }
            if (archiveFields != null) {
                settings.put(ARCHIVE_FIELDS, archiveFields.strip());
            }
            return new BackfillRequest(topic, fromText.strip(), toText.strip(), from, to, zone,
                    Optional.ofNullable(partitions), isolationLevel, allowDataLoss, checkedReaders(settings));
        }
    }
}
