package dev.kbackfill.core.record;

import org.apache.kafka.common.header.Headers;

/**
 * One record as read from Kafka, undecoded.
 *
 * @param topic     the source topic
 * @param partition the source partition
 * @param offset    its offset
 * @param timestamp its timestamp in epoch milliseconds
 * @param logTime   its log time: the highest timestamp of its partition at or before it (the version rule's time,
 *                  {@link dev.kbackfill.core.version.LogClock}), epoch milliseconds
 * @param key       the key bytes, or null
 * @param value     the value bytes, or null (a tombstone)
 * @param headers   its headers
 */
public record SourceRecord(String topic, int partition, long offset, long timestamp, long logTime, byte[] key,
                           byte[] value, Headers headers) {

    /** A record whose log time is its own timestamp (its partition's earlier records are not known). */
    public SourceRecord(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value,
                        Headers headers) {
        this(topic, partition, offset, timestamp, timestamp, key, value, headers);
    }

    /** The same record with its log time. */
    public SourceRecord withLogTime(long time) {
        return new SourceRecord(topic, partition, offset, timestamp, time, key, value, headers);
    }

    /** {@code topic/partition@offset}, for messages. */
    public String coordinates() {
        return topic + "/" + partition + "@" + offset;
    }

    /** The bytes this record occupies in memory, roughly: for bounding buffers. */
    public long sizeInBytes() {
        return 64L + (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
    }
}
