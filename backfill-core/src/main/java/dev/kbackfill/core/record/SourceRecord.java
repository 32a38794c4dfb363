package dev.kbackfill.core.record;

import org.apache.kafka.common.header.Headers;

/**
 * One record as read from Kafka, undecoded.
 *
 * @param topic     the source topic
 * @param partition the source partition
 * @param offset    its offset
 * @param timestamp its timestamp in epoch milliseconds
 * @param key       the key bytes, or null
 * @param value     the value bytes, or null (a tombstone)
 * @param headers   its headers
 */
public record SourceRecord(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value,
                           Headers headers) {

    /** {@code topic/partition@offset}, for messages. */
    public String coordinates() {
        return topic + "/" + partition + "@" + offset;
    }

    /** The bytes this record occupies in memory, roughly: for bounding buffers. */
    public long sizeInBytes() {
        return 64L + (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
    }
}
