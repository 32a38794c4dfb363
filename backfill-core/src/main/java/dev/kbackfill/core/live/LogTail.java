package dev.kbackfill.core.live;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.core.read.ReadException;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.SourceRecord;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The log after a range: for each partition of a plan, the keys of the records from the range's end on, read keys
 * only (values decoded only where the key comes from value fields) by a group-less consumer ({@code assign} and
 * {@code seek}, no commits) and kept as 128-bit hashes in bounded memory ({@link KeyHashes}). A run beside a live
 * writer asks it whether a record of its range is its key's last in the log ({@link #laterThanRange}), after reading
 * on to the log's end as it stands just before each write ({@link #catchUp}): a key with a later record is one the
 * live writer has written, or will write, something newer for.
 *
 * <p>Records whose key cannot be decoded are counted ({@link #undecodable()}) and left out: the run could not write
 * them either. Records deleted from the log before they were read (retention reaching past the range's end) are
 * skipped and counted ({@link #lost()}).
 */
public final class LogTail implements AutoCloseable {

    private final String topic;
    private final Consumer<byte[], byte[]> consumer;
    private final RecordDecoder decoder;
    private final KeyHashes keys;
    private final Map<TopicPartition, Long> positions = new HashMap<>();
    private final Duration stallTimeout;
    private long records;
    private long undecodable;
    private long lost;

    /**
     * @param clientConfig the run's client settings (no {@code group.id})
     * @param from         per partition, where its range ends: the first offset of the log after it
     * @param memoryBytes  what the keys may take in memory before they go to disk
     * @param spillParent  where they go then
     */
    public LogTail(Map<String, Object> clientConfig, IsolationLevel isolation, String topic, Map<Integer, Long> from,
                   RecordDecoder decoder, long memoryBytes, Path spillParent, Duration stallTimeout) {
        this(topic, new KafkaConsumer<>(config(clientConfig, isolation), new ByteArrayDeserializer(),
                new ByteArrayDeserializer()), from, decoder, memoryBytes, spillParent, stallTimeout);
    }

    /** Reads through a consumer made elsewhere (group-less, without auto-commit). */
    LogTail(String topic, Consumer<byte[], byte[]> consumer, Map<Integer, Long> from, RecordDecoder decoder,
            long memoryBytes, Path spillParent, Duration stallTimeout) {
        this.topic = topic;
        this.consumer = consumer;
        this.decoder = decoder;
        this.keys = new KeyHashes(memoryBytes, spillParent);
        this.stallTimeout = stallTimeout;
        from.forEach((p, offset) -> positions.put(new TopicPartition(topic, p), offset));
        if (!positions.isEmpty()) {
            consumer.assign(positions.keySet());
            positions.forEach(consumer::seek);
        }
    }

    private static Map<String, Object> config(Map<String, Object> clientConfig, IsolationLevel isolation) {
        Map<String, Object> c = new HashMap<>(BoundedReader.consumerConfig(clientConfig, isolation));
        Object id = clientConfig.get(ConsumerConfig.CLIENT_ID_CONFIG);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, (id == null ? "kbackfill" : id) + "-after-range");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        return c;
    }

    /**
     * Reads every partition from where it stands to the log's end as it stands now (the last stable offset under
     * read_committed), adding the keys of what it reads.
     *
     * @return the records read by this call
     * @throws ReadException when no partition moves for the stall timeout
     */
    public long catchUp() {
        if (positions.isEmpty()) {
            return 0;
        }
        Map<TopicPartition, Long> ends = consumer.endOffsets(positions.keySet());
        List<TopicPartition> pending = new ArrayList<>();
        for (Map.Entry<TopicPartition, Long> e : positions.entrySet()) {
            if (e.getValue() < ends.getOrDefault(e.getKey(), 0L)) {
                pending.add(e.getKey());
            }
        }
        if (pending.isEmpty()) {
            return 0;
        }
        consumer.pause(positions.keySet());
        consumer.resume(pending);
        long before = records;
        long lastProgress = System.nanoTime();
        while (!pending.isEmpty()) {
            ConsumerRecords<byte[], byte[]> polled;
            try {
                polled = consumer.poll(Duration.ofMillis(200));
            } catch (OffsetOutOfRangeException e) {
                skipDeleted(e);
                continue;
            }
            for (ConsumerRecord<byte[], byte[]> r : polled) {
                add(r);
            }
            List<TopicPartition> done = new ArrayList<>();
            for (TopicPartition tp : pending) {
                long position = consumer.position(tp);
                if (position > positions.get(tp)) {
                    positions.put(tp, position);
                    lastProgress = System.nanoTime();
                }
                if (position >= ends.get(tp)) {
                    done.add(tp);
                }
            }
            pending.removeAll(done);
            consumer.pause(done);
            if (!pending.isEmpty() && System.nanoTime() - lastProgress > stallTimeout.toNanos()) {
                StringBuilder where = new StringBuilder();
                pending.forEach(tp -> where.append(where.length() == 0 ? "" : ", ").append("partition ")
                        .append(tp.partition()).append(" at offset ").append(positions.get(tp)).append(" (end ")
                        .append(ends.get(tp)).append(")"));
                throw new ReadException("no progress reading the log of " + topic + " after the range for "
                        + stallTimeout.toSeconds() + " s: " + where, null);
            }
        }
        return records - before;
    }

    private void add(ConsumerRecord<byte[], byte[]> r) {
        records++;
        SourceRecord record = new SourceRecord(r.topic(), r.partition(), r.offset(), r.timestamp(), r.key(), r.value(),
                r.headers());
        Map<String, Object> key;
        try {
            key = decoder.keyOf(record);
        } catch (DecodeException | dev.kbackfill.resolver.RequestException e) {
            undecodable++; // no key to match: the run could not write such a record either
            return;
        }
        keys.add(KeyIdentity.of(key).hash128());
    }

    /** Records deleted since (retention past the range's end): skipped to the log start, and counted. */
    private void skipDeleted(OffsetOutOfRangeException e) {
        Map<TopicPartition, Long> starts = consumer.beginningOffsets(e.offsetOutOfRangePartitions().keySet());
        e.offsetOutOfRangePartitions().forEach((tp, at) -> {
            long start = starts.getOrDefault(tp, at);
            if (start > at) {
                lost += start - at;
                consumer.seek(tp, start);
                positions.put(tp, start);
            } else {
                throw new ReadException("offset " + at + " of partition " + tp.partition() + " of " + topic
                        + " lies past the end of the log: the log was truncated", e);
            }
        });
    }

    /**
     * Merges what went to disk into one file: called once the bulk of the log after the range is read, so that each
     * lookup searches one file.
     */
    public void seal() {
        keys.seal();
    }

    /** Whether the log after the range holds a record of {@code key} (a decoded key, as a change carries it). */
    public boolean laterThanRange(Map<String, Object> key) {
        return !keys.isEmpty() && keys.contains(KeyIdentity.of(key).hash128());
    }

    /** Records read after the range so far. */
    public long records() {
        return records;
    }

    /** Of those, records whose key could not be decoded. */
    public long undecodable() {
        return undecodable;
    }

    /** Offsets after the range deleted before they could be read. */
    public long lost() {
        return lost;
    }

    /** Where the keys went to disk, if they did. */
    public java.util.Optional<Path> spilledTo() {
        return keys.spilled() ? keys.directory() : java.util.Optional.empty();
    }

    /** Per partition, the offset up to which the log after the range was read. */
    public Map<Integer, Long> positions() {
        Map<Integer, Long> out = new java.util.TreeMap<>();
        positions.forEach((tp, p) -> out.put(tp.partition(), p));
        return out;
    }

    @Override
    public void close() {
        try {
            consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5)));
        } finally {
            keys.close();
        }
    }
}
