package dev.kbackfill.sink.lake;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.IntFunction;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.version.Version;

/**
 * The tombstone ledger of a lake table: for every key a hard delete removed under newer-wins, the version of the
 * tombstone, so that an older replay never brings the key back. Keys are spread over {@value #BUCKETS} buckets by
 * hash, each bucket one JSON document, so that a commit rewrites only the buckets its deletes fall in. Where the
 * buckets live is the table format's business (Delta: domain metadata; Iceberg: files named by the snapshot that
 * commits them); either way they are written in the same commit as the deletes, and readers never see them as rows.
 */
public class TombstoneLedger {

    public static final int BUCKETS = 64;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One ledger entry: the tombstone's version, and when kbackfill recorded the delete (epoch milliseconds; for an
     * entry from before that was recorded, the tombstone's own timestamp). Pruning goes by the latter, so that a
     * back-dated delete is not forgotten the moment it is recorded.
     */
    public record Entry(Version version, long recordedAt) {
    }

    private final IntFunction<Optional<String>> stored;
    private final Map<Integer, Map<String, Entry>> loaded = new HashMap<>();
    private final Map<Integer, Map<String, Entry>> changed = new TreeMap<>();

    /** A ledger whose bucket {@code b} is the JSON document {@code stored.apply(b)}, if any. */
    public TombstoneLedger(IntFunction<Optional<String>> stored) {
        this.stored = stored;
    }

    /**
     * A key as the ledger holds it. {@code text} does not depend on the order the key's fields came in: a key of one
     * column is its value alone ({@code [7]}); a key of several, each value named by its column, in the order of the
     * names ({@code {"id":7,"region":"eu"}}). {@code legacy} is, for several columns, the text ledgers held before
     * that: the values as a list in the order the batch gave its key fields, looked up for entries recorded then and
     * never written again (null for one column).
     */
    public record Key(String text, String legacy) {

        /** The key of these physical values of these key columns (in the same order, whichever that is). */
        public static Key of(List<String> columns, List<Object> values) {
            ArrayNode list = values(values);
            return columns.size() == 1 ? new Key(list.toString(), null)
                    : new Key(named(columns, list).toString(), list.toString());
        }
    }

    /** The key's ledger text ({@link Key#text}) from the physical values of these key columns. */
    public static String keyText(List<String> columns, List<Object> values) {
        return Key.of(columns, values).text();
    }

    /**
     * A key text a ledger of before held for several columns ({@link Key#legacy}) as today's text, its values taken to
     * be those of {@code columns} in that order; any other text as it is.
     */
    public static String fromLegacy(String text, List<String> columns) {
        if (columns.size() < 2 || !text.startsWith("[")) {
            return text;
        }
        try {
            JsonNode list = JSON.readTree(text);
            return list.size() == columns.size() ? named(columns, (ArrayNode) list).toString() : text;
        } catch (IOException e) {
            return text;
        }
    }

    private static ObjectNode named(List<String> columns, ArrayNode values) {
        TreeMap<String, JsonNode> byName = new TreeMap<>();
        for (int i = 0; i < columns.size(); i++) {
            byName.put(columns.get(i), values.get(i));
        }
        ObjectNode o = JSON.createObjectNode();
        byName.forEach(o::set);
        return o;
    }

    private static ArrayNode values(List<Object> key) {
        ArrayNode a = JSON.createArrayNode();
        for (Object v : key) {
            if (v == null) {
                a.addNull();
            } else if (v instanceof ByteBuffer b) {
                byte[] bytes = new byte[b.remaining()];
                b.duplicate().get(bytes);
                a.add("b64:" + Base64.getEncoder().encodeToString(bytes));
            } else if (v instanceof String s) {
                a.add(s);
            } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
                a.add(((Number) v).longValue());
            } else if (v instanceof java.math.BigDecimal d) {
                a.add(d.stripTrailingZeros().toPlainString());
            } else {
                a.add(v.toString());
            }
        }
        return a;
    }

    /**
     * The version of the tombstone that deleted {@code key}, or null: the newer of its entry and, for several columns,
     * an entry of before under its legacy text.
     */
    public Version deleted(Key key) {
        Version now = deleted(key.text());
        Version before = key.legacy() == null ? null : deleted(key.legacy());
        return before == null || (now != null && Version.compare(now, before) >= 0) ? now : before;
    }

    /** Records a delete of {@code key} under its text; {@link #changed()} holds it for the commit. */
    public void record(Key key, Version version) {
        record(key.text(), version);
    }

    /** The version of the tombstone that deleted {@code key}, or null. */
    public Version deleted(String key) {
        Map<String, Entry> pending = changed.get(bucket(key));
        Entry e = pending != null && pending.containsKey(key) ? pending.get(key) : bucketOf(bucket(key)).get(key);
        return e == null ? null : e.version();
    }

    /** Every entry of every bucket, pending records included. */
    public Map<String, Version> all() {
        Map<String, Version> all = new HashMap<>();
        for (int b = 0; b < BUCKETS; b++) {
            (changed.containsKey(b) ? changed.get(b) : bucketOf(b)).forEach((k, e) -> all.put(k, e.version()));
        }
        return all;
    }

    /** Whether the table holds any ledger entry: without one, no incoming key need be looked up. */
    public boolean holdsAny() {
        for (int b = 0; b < BUCKETS; b++) {
            if (loaded.containsKey(b) ? !loaded.get(b).isEmpty() : stored.apply(b).isPresent()) {
                return true;
            }
        }
        return false;
    }

    /** Records a delete; {@link #changed()} holds it for the commit. */
    public void record(String key, Version version) {
        int b = bucket(key);
        changed.computeIfAbsent(b, n -> new HashMap<>(bucketOf(n))).put(key, new Entry(version, System.currentTimeMillis()));
    }

    /** Forgets the deletes recorded before {@code beforeMillis}; returns how many. */
    public long forgetBefore(long beforeMillis) {
        long forgotten = 0;
        for (int b = 0; b < BUCKETS; b++) {
            Map<String, Entry> entries = bucketOf(b);
            Map<String, Entry> kept = new HashMap<>();
            entries.forEach((k, e) -> {
                if (e.recordedAt() >= beforeMillis) {
                    kept.put(k, e);
                }
            });
            if (kept.size() != entries.size()) {
                forgotten += entries.size() - kept.size();
                changed.put(b, kept);
            }
        }
        return forgotten;
    }

    /** The buckets changed since this ledger was read, by number, as the JSON documents to store. */
    public Map<Integer, String> changed() {
        Map<Integer, String> out = new TreeMap<>();
        changed.forEach((b, entries) -> out.put(b, write(entries)));
        return out;
    }

    private static int bucket(String key) {
        return Math.floorMod(key.hashCode(), BUCKETS);
    }

    private Map<String, Entry> bucketOf(int b) {
        return loaded.computeIfAbsent(b, n -> stored.apply(n).map(TombstoneLedger::read).orElseGet(HashMap::new));
    }

    private static Map<String, Entry> read(String json) {
        try {
            Map<String, Entry> entries = new HashMap<>();
            JsonNode root = JSON.readTree(json);
            root.fields().forEachRemaining(e -> {
                JsonNode v = e.getValue();
                // [topic, partition, offset, timestamp, log time, recorded at, version field]; older entries have
                // four to six
                long ts = v.get(3).asLong();
                JsonNode f = v.size() > 6 ? v.get(6) : null;
                Comparable<?> field = f == null || f.isNull() ? null : f.isTextual() ? f.asText() : (Comparable<?>) f.asLong();
                entries.put(e.getKey(), new Entry(new Version(v.get(0).isNull() ? null : v.get(0).asText(),
                        v.get(1).asInt(), v.get(2).asLong(), ts, v.size() > 4 ? v.get(4).asLong() : ts, field),
                        v.size() > 5 ? v.get(5).asLong() : ts));
            });
            return entries;
        } catch (IOException e) {
            throw new UncheckedIOException("a bucket of the table's tombstone ledger is not JSON", e);
        }
    }

    private static String write(Map<String, Entry> entries) {
        ObjectNode root = JSON.createObjectNode();
        new TreeMap<>(entries).forEach((k, e) -> {
            Version v = e.version();
            ArrayNode a = root.putArray(k);
            if (v.topic() == null) {
                a.addNull();
            } else {
                a.add(v.topic());
            }
            a.add(v.partition()).add(v.offset()).add(v.timestamp()).add(v.logTime()).add(e.recordedAt());
            if (v.field() instanceof String text) {
                a.add(text);
            } else if (v.field() instanceof Long number) {
                a.add(number);
            }
        });
        return root.toString();
    }
}
