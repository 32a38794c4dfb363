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
import dev.kbackfill.core.version.LogClock;
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
 * Each key's newest record in the log from where a run starts to the log's end: for each partition of a plan, the
 * records from the run's start on (the rest of its range, and the log after it), read keys only (values decoded only
 * where the key comes from value fields) by a group-less consumer ({@code assign} and {@code seek}, no commits),
 * stamped with their log time as every run stamps them ({@link LogClock}), the newest place per key kept in bounded
 * memory ({@link KeyVersions}). A run beside a live writer asks it whether a record of its range is its key's newest
 * in the log ({@link #superseded}), after reading on to the log's end as it stands just before each write
 * ({@link #catchUp}): a key with a newer record is one the live writer has written, or will write, something newer
 * for, whether that record lies after the range or later in it.
 *
 * <p>Records whose key cannot be decoded are counted ({@link #undecodable()}) and left out: the run could not write
 * them either. Records deleted from the log before they were read (retention reaching past the range's end) are
 * skipped and counted ({@link #lost()}).
 */
public final class NewestInLog implements AutoCloseable {

    private final String topic;
    private final Consumer<byte[], byte[]> consumer;
    private final RecordDecoder decoder;
    private final KeyVersions keys;
    private final LogClock clock;
    private final Map<TopicPartition, Long> positions = new HashMap<>();
    private final Duration stallTimeout;
    private long records;
    private long undecodable;
    private long lost;

    /**
     * @param clientConfig the run's client settings (no {@code group.id})
     * @param from         per partition, where the run starts reading it
     * @param logTimeBefore per partition, the log time below that start ({@link dev.kbackfill.resolver.LogTimes})
     * @param memoryBytes  what the keys may take in memory before they go to disk
     * @param spillParent  where they go then
     */
    public NewestInLog(Map<String, Object> clientConfig, IsolationLevel isolation, String topic, Map<Integer, Long> from,
                       Map<Integer, Long> logTimeBefore, RecordDecoder decoder, long memoryBytes, Path spillParent,
                       Duration stallTimeout) {
        this(topic, new KafkaConsumer<>(config(clientConfig, isolation), new ByteArrayDeserializer(),
                new ByteArrayDeserializer()), from, logTimeBefore, decoder, memoryBytes, spillParent, stallTimeout);
    }

    /** Reads through a consumer made elsewhere (group-less, without auto-commit). */
    NewestInLog(String topic, Consumer<byte[], byte[]> consumer, Map<Integer, Long> from, Map<Integer, Long> logTimeBefore,
                RecordDecoder decoder, long memoryBytes, Path spillParent, Duration stallTimeout) {
        this.topic = topic;
        this.consumer = consumer;
        this.decoder = decoder;
        this.keys = new KeyVersions(memoryBytes, spillParent);
        this.clock = new LogClock(logTimeBefore);
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
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, (id == null ? "kbackfill" : id) + "-newest");
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
                add(r); // in offset order per partition: the clock moves as a run's does
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
                throw new ReadException("no progress reading the log of " + topic + " for its keys' newest records for "
                        + stallTimeout.toSeconds() + " s: " + where, null);
            }
        }
        return records - before;
    }

    private void add(ConsumerRecord<byte[], byte[]> r) {
        records++;
        long logTime = clock.stamp(r.partition(), r.timestamp());
        Map<String, Object> key;
        SourceRecord record = new SourceRecord(r.topic(), r.partition(), r.offset(), r.timestamp(), logTime, r.key(),
                r.value(), r.headers());
        try {
            key = decoder.keyOf(record);
        } catch (DecodeException | dev.kbackfill.resolver.RequestException e) {
            undecodable++; // no key to match: the run could not write such a record either
            return;
        }
        keys.add(KeyIdentity.of(key).hash128(), new KeyVersions.Place(logTime, r.partition(), r.offset()));
    }

    /** Records deleted since (retention past the run's start): skipped to the log start, and counted. */
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
     * Merges what went to disk into one file: called once the bulk of the log is read, so that each lookup searches
     * one file.
     */
    public void seal() {
        keys.seal();
    }

    /**
     * Whether the log read so far holds a newer record of the change's key than the change (by log time, partition
     * and offset, the version rule without a version field): the change is not its key's newest in the log.
     */
    public boolean superseded(dev.kbackfill.core.record.Change c) {
        if (keys.isEmpty()) {
            return false;
        }
        KeyVersions.Place newest = keys.newest(KeyIdentity.of(c.key()).hash128());
        return newest != null && newest.after(new KeyVersions.Place(c.logTime(), c.partition(), c.offset()));
    }

    /** Records read so far. */
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

    /** Per partition, the offset up to which the log was read. */
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
