package dev.kbackfill.core.sink;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import dev.kbackfill.resolver.BackfillRequest;

/**
 * Everything that shapes what a job writes, by name: the topic, the request as typed, the destination (table or
 * topic), the key and value formats, the key fields, the conflict and tombstone modes and strict time. A job is
 * bound to its spec: the same job name with any part changed is a conflict that names the part, never "nothing to
 * do" for a destination the job never wrote.
 *
 * @param parts the parts by name, e.g. {@code table -> public.orders}
 */
public record JobSpec(Map<String, String> parts) {

    public static final String TOPIC = "topic";
    public static final String REQUEST = "request";
    public static final String DESTINATION = "destination";
    public static final String KEY_FORMAT = "key-format";
    /** The version field a job orders by ({@code --version-field}); only jobs that have one have the part. */
    public static final String VERSION_FIELD = "version-field";
    public static final String VALUE_FORMAT = "value-format";
    /** The records kept ({@code --where}), in specs of jobs that filter. */
    public static final String WHERE = "where";
    /** Which fields become which columns ({@code --columns}, {@code --rename}, {@code --header-columns}). */
    public static final String COLUMNS = "columns";
    /** Parts only some jobs have, absent meaning "none": a job cannot start or stop having one. */
    private static final List<String> OPTIONAL_PARTS = List.of(VERSION_FIELD, WHERE, COLUMNS);
    public static final String KEY_FIELDS = "key-fields";
    public static final String ON_CONFLICT = "on-conflict";
    public static final String ON_TOMBSTONE = "on-tombstone";
    public static final String STRICT_TIME = "strict-time";
    /**
     * How the run executes: {@code local} (one process) or {@code spark} with its wave split, e.g.
     * {@code spark, 64 partitions per wave}. Run-scoped: it must match only while a run is unfinished (its progress
     * has that engine's shape); a finished job's next run may use another.
     */
    public static final String ENGINE = "engine";
    /** The engine of a spec stored before specs named one. */
    public static final String LOCAL = "local";

    /** Parts that bind a run rather than the job ({@link #runDifferences}). */
    private static final java.util.Set<String> RUN_SCOPED = java.util.Set.of(ENGINE);

    /**
     * How the job's runs were set up, as a {@code JobDefinition} document without its plan and without credentials
     * (its source cluster's client settings, its decoding options, its sink): stored with the job so that commands
     * about it ({@code verify --job}) run with what its runs were given. Information, not a part that binds the job:
     * it takes no part in the fingerprint or in {@link #differences}.
     */
    public static final String DEFINITION = "definition";

    /** A spec stored before jobs had one: only the request's fingerprint is known. */
    public static final JobSpec UNKNOWN = new JobSpec(Map.of());

    public JobSpec {
        parts = Collections.unmodifiableMap(new TreeMap<>(parts));
    }

    /**
     * @param request     the request as typed
     * @param destination the sink's destination ({@link Sink#destination()})
     * @param keyFormat   the key format, e.g. {@code string}
     * @param valueFormat the value format
     * @param keyFields   value fields keying the rows, empty for the record key
     */
    public static JobSpec of(BackfillRequest request, String destination, String keyFormat, String valueFormat,
                             List<String> keyFields, ConflictMode conflict, TombstoneMode tombstone, boolean strictTime) {
        return of(request, destination, keyFormat, valueFormat, keyFields, conflict, tombstone, strictTime, LOCAL);
    }

    /** @param engine how the run executes ({@link #ENGINE}) */
    public static JobSpec of(BackfillRequest request, String destination, String keyFormat, String valueFormat,
                             List<String> keyFields, ConflictMode conflict, TombstoneMode tombstone, boolean strictTime,
                             String engine) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put(TOPIC, request.topic());
        p.put(REQUEST, JobIdentity.describe(request));
        p.put(DESTINATION, destination);
        p.put(KEY_FORMAT, keyFormat);
        p.put(VALUE_FORMAT, valueFormat);
        p.put(KEY_FIELDS, keyFields.isEmpty() ? "(the record key)" : String.join(",", keyFields));
        p.put(ON_CONFLICT, conflict.label());
        p.put(ON_TOMBSTONE, tombstone.label());
        p.put(STRICT_TIME, Boolean.toString(strictTime));
        p.put(ENGINE, engine);
        return new JobSpec(p);
    }

    /** This spec with one more part (a part only some jobs have, such as {@link #VERSION_FIELD}). */
    public JobSpec with(String part, String value) {
        Map<String, String> p = new LinkedHashMap<>(parts);
        p.put(part, value);
        return new JobSpec(p);
    }

    public boolean isKnown() {
        return !binding().isEmpty();
    }

    /** A short hash of every part that binds the job (not the {@link #DEFINITION}): equal specs, equal fingerprints. */
    public String fingerprint() {
        StringBuilder sb = new StringBuilder();
        binding().forEach((k, v) -> sb.append(k).append('\u0000').append(v).append('\u0001'));
        return sha256(sb.toString()).substring(0, 16);
    }

    /** The parts that bind the job: every part but the {@link #DEFINITION}, by name. */
    public Map<String, String> binding() {
        if (!parts.containsKey(DEFINITION)) {
            return parts;
        }
        Map<String, String> p = new TreeMap<>(parts);
        p.remove(DEFINITION);
        return Collections.unmodifiableMap(p);
    }

    /** How the job's runs were set up ({@link #DEFINITION}), where the spec was stored with it. */
    public java.util.Optional<String> definition() {
        return java.util.Optional.ofNullable(parts.get(DEFINITION));
    }

    /**
     * What differs from {@code other}, for people: {@code destination public.a, not public.b}; only parts this spec
     * has are compared (a spec stored by an older version knows fewer), except the version field, the filter and the
     * column mapping, whose absence is "none": a job cannot start or stop ordering by a field, filtering or mapping.
     */
    public List<String> differences(JobSpec other) {
        List<String> diffs = new ArrayList<>();
        binding().forEach((k, v) -> {
            String o = other.parts.get(k);
            if (!RUN_SCOPED.contains(k) && o != null && !Objects.equals(v, o)) {
                diffs.add(k + " " + v + ", not " + o);
            }
        });
        for (String part : OPTIONAL_PARTS) {
            String mine = parts.getOrDefault(part, "(none)");
            String theirs = other.parts.getOrDefault(part, "(none)");
            if (!mine.equals(theirs) && (!parts.containsKey(part) || !other.parts.containsKey(part))) {
                diffs.add(part + " " + mine + ", not " + theirs);
            }
        }
        return diffs;
    }

    /**
     * What differs from {@code other} among the parts that bind an unfinished run ({@link #ENGINE}), a spec without
     * an engine counting as {@link #LOCAL}.
     */
    public List<String> runDifferences(JobSpec other) {
        List<String> diffs = new ArrayList<>();
        for (String k : RUN_SCOPED) {
            String v = parts.getOrDefault(k, LOCAL);
            String o = other.parts.getOrDefault(k, LOCAL);
            if (!v.equals(o)) {
                diffs.add(k + " " + v + ", not " + o);
            }
        }
        return diffs;
    }

    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
