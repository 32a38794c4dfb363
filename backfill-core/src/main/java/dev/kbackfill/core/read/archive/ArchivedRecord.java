package dev.kbackfill.core.read.archive;

/**
 * One record as an archive file holds it.
 *
 * @param offset    its offset in the topic (exact, or inferred from its file's name and its index)
 * @param exact     whether the file stored the offset (else it is inferred)
 * @param timestamp its timestamp in epoch milliseconds, or -1 where the archive did not store it
 * @param key       its key as bytes, or null
 * @param value     its value as bytes, or null (a tombstone)
 * @param headers   its headers, as far as the archive stored them (none where it did not)
 */
public record ArchivedRecord(long offset, boolean exact, long timestamp, byte[] key, byte[] value,
                      org.apache.kafka.common.header.Headers headers) {
}
