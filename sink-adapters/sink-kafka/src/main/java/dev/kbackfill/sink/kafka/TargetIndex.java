package dev.kbackfill.sink.kafka;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * What the target topic holds per key, for {@code newer-wins} and {@code insert-only}: the source coordinates of
 * the record that wrote it (from kbackfill's headers), or just its timestamp for records written by others, and
 * whether it is a tombstone. A plain in-memory map: about 150 bytes per key, so a few million keys fit in the
 * default heap; beyond that use {@code --on-conflict overwrite} (see docs/sinks/kafka.md).
 */
final class TargetIndex {

    static final String SOURCE_TOPIC = "kbackfill.source.topic";
    static final String SOURCE_PARTITION = "kbackfill.source.partition";
    static final String SOURCE_OFFSET = "kbackfill.source.offset";
    static final String SOURCE_TIMESTAMP = "kbackfill.source.timestamp";

    /**
     * @param partition the source partition, or -1 when unknown (a record kbackfill did not write)
     * @param offset    the source offset, when the partition is known
     * @param timestamp the source timestamp, else the record's own
     * @param deleted   whether the key's last record is a tombstone
     */
    record Stamp(int partition, long offset, long timestamp, boolean deleted) {
    }

    private final String sourceTopic;
    private final Map<ByteBuffer, Stamp> stamps = new HashMap<>();

    TargetIndex(String sourceTopic) {
        this.sourceTopic = sourceTopic;
    }

    int size() {
        return stamps.size();
    }

    /** Records what a target record says about its key (records arrive in offset order per partition). */
    void add(byte[] key, boolean tombstone, long timestamp, Headers headers) {
        if (key == null) {
            return;
        }
        int partition = -1;
        long offset = -1;
        long ts = timestamp;
        if (sourceTopic.equals(text(headers.lastHeader(SOURCE_TOPIC)))) {
            try {
                partition = Integer.parseInt(text(headers.lastHeader(SOURCE_PARTITION)));
                offset = Long.parseLong(text(headers.lastHeader(SOURCE_OFFSET)));
                ts = Long.parseLong(text(headers.lastHeader(SOURCE_TIMESTAMP)));
            } catch (NumberFormatException | NullPointerException e) {
                partition = -1;
            }
        }
        stamps.put(ByteBuffer.wrap(key), new Stamp(partition, offset, ts, tombstone));
    }

    /** Whether a record from {@code partition}/{@code offset} at {@code timestamp} is not older than what the key holds. */
    boolean newerWins(byte[] key, int partition, long offset, long timestamp) {
        Stamp s = stamps.get(ByteBuffer.wrap(key));
        if (s == null) {
            return true;
        }
        if (s.partition() == partition) {
            return offset >= s.offset();
        }
        return timestamp >= s.timestamp();
    }

    /** Whether the key holds no live value (absent or deleted). */
    boolean absent(byte[] key) {
        Stamp s = stamps.get(ByteBuffer.wrap(key));
        return s == null || s.deleted();
    }

    void written(byte[] key, int partition, long offset, long timestamp, boolean tombstone) {
        stamps.put(ByteBuffer.wrap(key), new Stamp(partition, offset, timestamp, tombstone));
    }

    private static String text(Header h) {
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
