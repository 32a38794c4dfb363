package dev.kbackfill.sink.delta;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.version.Version;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Transaction;

/**
 * The tombstone ledger of a Delta table: for every key a hard delete removed under newer-wins, the version of the
 * tombstone, so that an older replay never brings the key back. It lives in the table's own log as domain metadata
 * ({@code kbackfill.deletes.N}, keys spread over {@value #BUCKETS} domains by hash), written in the same commit as
 * the delete, so that the two are atomic; readers of the table never see it as rows, and Delta readers that do not
 * know the domains ignore them. A commit rewrites only the buckets its deletes fall in.
 */
final class DeltaTombstones {

    static final int BUCKETS = 64;
    private static final String PREFIX = "kbackfill.deletes.";
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One ledger entry: the tombstone's version, and when kbackfill recorded the delete (epoch milliseconds; for an
     * entry from before that was recorded, the tombstone's own timestamp). Pruning goes by the latter, so that a
     * back-dated delete is not forgotten the moment it is recorded.
     */
    record Entry(Version version, long recordedAt) {
    }

    private final Snapshot snapshot;
    private final Map<Integer, Map<String, Entry>> loaded = new HashMap<>();
    private final Map<Integer, Map<String, Entry>> changed = new TreeMap<>();

    DeltaTombstones(Snapshot snapshot) {
        this.snapshot = snapshot;
    }

    /** The key as ledger text: its physical values in key column order. */
    static String keyText(List<Object> key) {
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
        return a.toString();
    }

    /** The version of the tombstone that deleted {@code key}, or null. */
    Version deleted(String key) {
        Map<String, Entry> pending = changed.get(bucket(key));
        Entry e = pending != null && pending.containsKey(key) ? pending.get(key) : bucketOf(bucket(key)).get(key);
        return e == null ? null : e.version();
    }

    /** Every entry of every bucket, pending records included. */
    Map<String, Version> all() {
        Map<String, Version> all = new HashMap<>();
        for (int b = 0; b < BUCKETS; b++) {
            (changed.containsKey(b) ? changed.get(b) : bucketOf(b)).forEach((k, e) -> all.put(k, e.version()));
        }
        return all;
    }

    /** Whether the table holds any ledger entry: without one, no incoming key need be looked up. */
    boolean holdsAny() {
        for (int b = 0; b < BUCKETS; b++) {
            if (snapshot.getDomainMetadata(PREFIX + b).isPresent()) {
                return true;
            }
        }
        return false;
    }

    /** Records a delete; {@link #addTo} writes it with the commit. */
    void record(String key, Version version) {
        int b = bucket(key);
        changed.computeIfAbsent(b, n -> new HashMap<>(bucketOf(n))).put(key, new Entry(version, System.currentTimeMillis()));
    }

    /** Forgets the deletes recorded before {@code beforeMillis}; returns how many. */
    long forgetBefore(long beforeMillis) {
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

    /** Adds the changed buckets to the commit. */
    void addTo(Transaction txn) {
        changed.forEach((b, entries) -> txn.addDomainMetadata(PREFIX + b, write(entries)));
    }

    private static int bucket(String key) {
        return Math.floorMod(key.hashCode(), BUCKETS);
    }

    private Map<String, Entry> bucketOf(int b) {
        return loaded.computeIfAbsent(b, n -> snapshot.getDomainMetadata(PREFIX + n).map(DeltaTombstones::read)
                .orElseGet(HashMap::new));
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
            throw new UncheckedIOException("a tombstone ledger domain of the Delta table is not JSON", e);
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
