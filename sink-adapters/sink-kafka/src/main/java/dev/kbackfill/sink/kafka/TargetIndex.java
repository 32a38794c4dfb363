package dev.kbackfill.sink.kafka;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import dev.kbackfill.core.version.Version;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * What the target topic holds per key, for {@code newer-wins} and {@code insert-only}: the source coordinates of
 * the record that wrote it (from kbackfill's headers: topic, partition, offset, timestamp), or just its timestamp for
 * records written by others, and whether it is a tombstone. A tombstone is a version like any other: an older
 * replay never brings a deleted key back while the topic keeps the tombstone. Compared by the one version rule
 * ({@link Version}). A plain in-memory map: about 150 bytes per key, so a few million keys fit in the
 * default heap; beyond that use {@code --on-conflict overwrite} (see docs/sinks/kafka.md).
 */
final class TargetIndex {

    static final String SOURCE_TOPIC = "kbackfill.source.topic";
    static final String SOURCE_PARTITION = "kbackfill.source.partition";
    static final String SOURCE_OFFSET = "kbackfill.source.offset";
    static final String SOURCE_TIMESTAMP = "kbackfill.source.timestamp";

    /**
     * @param topic     the source topic (one shared instance per topic), or {@link #FOREIGN}
     * @param partition the source partition, or -1 when unknown (a record kbackfill did not write)
     * @param offset    the source offset, when the partition is known
     * @param timestamp the source timestamp, else the record's own
     * @param deleted   whether the key's last record is a tombstone
     */
    record Stamp(String topic, int partition, long offset, long timestamp, boolean deleted) {
        Version version() {
            return new Version(topic, partition, offset, timestamp);
        }
    }

    /** The origin of a record kbackfill did not write: only its timestamp is known. */
    static final String FOREIGN = "";

    private final Map<ByteBuffer, Stamp> stamps = new HashMap<>();
    private final Map<String, String> topics = new HashMap<>();

    TargetIndex() {
    }

    int size() {
        return stamps.size();
    }

    /** Records what a target record says about its key (records arrive in offset order per partition). */
    void add(byte[] key, boolean tombstone, long timestamp, Headers headers) {
        if (key == null) {
            return;
        }
        String origin = FOREIGN;
        int partition = -1;
        long offset = -1;
        long ts = timestamp;
        String header = text(headers.lastHeader(SOURCE_TOPIC));
        if (header != null) {
            try {
                partition = Integer.parseInt(text(headers.lastHeader(SOURCE_PARTITION)));
                offset = Long.parseLong(text(headers.lastHeader(SOURCE_OFFSET)));
                ts = Long.parseLong(text(headers.lastHeader(SOURCE_TIMESTAMP)));
                origin = topics.computeIfAbsent(header, t -> t);
            } catch (NumberFormatException | NullPointerException e) {
                origin = FOREIGN;
                partition = -1;
                offset = -1;
                ts = timestamp;
            }
        }
        stamps.put(ByteBuffer.wrap(key), new Stamp(origin, partition, offset, ts, tombstone));
    }

    /** Whether a record of version {@code incoming} supersedes what the key holds (value or tombstone). */
    boolean newerWins(byte[] key, Version incoming) {
        Stamp s = stamps.get(ByteBuffer.wrap(key));
        return s == null || incoming.supersedes(s.version());
    }

    /** Whether the key holds no live value (absent or deleted). */
    boolean absent(byte[] key) {
        Stamp s = stamps.get(ByteBuffer.wrap(key));
        return s == null || s.deleted();
    }

    /** Records what this run wrote for a key: the source record's version and whether it is a tombstone. */
    void written(byte[] key, String topic, int partition, long offset, long timestamp, boolean tombstone) {
        stamps.put(ByteBuffer.wrap(key), new Stamp(topics.computeIfAbsent(topic, t -> t), partition, offset,
                timestamp, tombstone));
    }

    private static String text(Header h) {
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
