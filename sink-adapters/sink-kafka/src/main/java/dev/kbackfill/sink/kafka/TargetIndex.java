package dev.kbackfill.sink.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.version.Version;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * What the target topic holds per key, for {@code newer-wins} and {@code insert-only}: the source coordinates of
 * the record that wrote it (from kbackfill's headers: topic, partition, offset, timestamp), or just its timestamp for
 * records written by others, and whether it is a tombstone. A tombstone is a version like any other: an older
 * replay never brings a deleted key back while the topic keeps the tombstone. Compared by the one version rule
 * ({@link Version}).
 *
 * <p>Kept in memory (about 170 bytes a key) up to a budget of keys, then on disk: past the budget every entry
 * moves into a RocksDB store (the store Kafka Streams keeps state in) in a temporary directory, with a bloom
 * filter and a small block cache, without a write-ahead log (the index is rebuilt from the topic on every run),
 * deleted on {@link #close()}. On disk an entry takes its key plus 25 bytes, so the index grows with the disk,
 * not with the heap.
 */
final class TargetIndex implements AutoCloseable {

    static final String SOURCE_TOPIC = "kbackfill.source.topic";
    static final String SOURCE_PARTITION = "kbackfill.source.partition";
    static final String SOURCE_OFFSET = "kbackfill.source.offset";
    static final String SOURCE_TIMESTAMP = "kbackfill.source.timestamp";
    /** The source record's log time (the version rule's time); absent on records written before it was carried. */
    static final String SOURCE_LOG_TIME = "kbackfill.source.log-time";
    /** The source record's version field ({@code --version-field}): {@code i:N} for whole numbers, {@code s:TEXT}. */
    static final String SOURCE_VERSION = "kbackfill.source.version";

    /** A version field's value as its header holds it. */
    static byte[] versionHeader(Comparable<?> field) {
        return ((field instanceof String ? "s:" : "i:") + field).getBytes(StandardCharsets.UTF_8);
    }

    /** A version field's value from its header, or null (none, or a header that is not one). */
    static Comparable<?> versionFrom(String header) {
        if (header == null || header.length() < 2 || header.charAt(1) != ':') {
            return null;
        }
        String v = header.substring(2);
        try {
            return header.charAt(0) == 's' ? v : header.charAt(0) == 'i' ? (Comparable<?>) Long.parseLong(v) : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * @param topic     the source topic (one shared instance per topic), or {@link #FOREIGN}
     * @param partition the source partition, or -1 when unknown (a record kbackfill did not write)
     * @param offset    the source offset, when the partition is known
     * @param timestamp the source timestamp, else the record's own
     * @param logTime   the source record's log time, else its timestamp
     * @param deleted   whether the key's last record is a tombstone
     * @param field     the source record's version field, or null
     */
    record Stamp(String topic, int partition, long offset, long timestamp, long logTime, boolean deleted,
                 Comparable<?> field, long digest, int targetPartition, long targetOffset) {
        Stamp(String topic, int partition, long offset, long timestamp, long logTime, boolean deleted,
              Comparable<?> field) {
            this(topic, partition, offset, timestamp, logTime, deleted, field, 0, -1, -1);
        }

        Version version() {
            return new Version(topic, partition, offset, timestamp, logTime, field);
        }
    }

    /** The origin of a record kbackfill did not write: only its timestamp is known. */
    static final String FOREIGN = "";

    private static final int ENCODED = 4 + 4 + 8 + 8 + 8 + 1 + 8 + 4 + 8;

    /** A value's digest, for verification: its length and its CRC-32C (0 for none). */
    static long digest(byte[] value) {
        if (value == null) {
            return 0;
        }
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(value);
        return ((long) value.length + 1) << 32 | crc.getValue();
    }

    private final long memoryKeys;
    private final Path spillParent;
    private final Map<ByteBuffer, Stamp> stamps = new HashMap<>();
    /** Source topics by number (one shared instance of each name, and the on-disk encoding): 0 is {@link #FOREIGN}. */
    private final List<String> topicList = new ArrayList<>(List.of(FOREIGN));
    private final Map<String, Integer> topicNumbers = new HashMap<>(Map.of(FOREIGN, 0));

    private RocksDB disk;
    private Options options;
    private WriteOptions writeOptions;
    private LRUCache cache;
    private Path spillDir;
    private WriteBatch pending;
    private long records;

    /** An index held in memory up to {@code memoryKeys} keys, then spilled into {@code spillParent}. */
    TargetIndex(long memoryKeys, Path spillParent) {
        this.memoryKeys = memoryKeys;
        this.spillParent = spillParent;
    }

    /** The keys of the index while it is in memory (on disk they are not counted: see {@link #records()}). */
    long size() {
        return stamps.size();
    }

    /** The target records (with a key) the index was built from. */
    long records() {
        return records;
    }

    /** Whether the index moved to disk, and where. */
    boolean onDisk() {
        return disk != null;
    }

    Path spillDirectory() {
        return spillDir;
    }

    /** Records what a target record says about its key (records arrive in offset order per partition). */
    void add(byte[] key, boolean tombstone, long timestamp, Headers headers) {
        add(key, tombstone, timestamp, headers, 0);
    }

    void add(byte[] key, boolean tombstone, long timestamp, Headers headers, long digest) {
        add(key, tombstone, timestamp, headers, digest, -1, -1);
    }

    /**
     * {@link #add}, with the {@link #digest} of the record's value and where the record is in the target topic
     * (verification: the value a person is shown is read from there).
     */
    void add(byte[] key, boolean tombstone, long timestamp, Headers headers, long digest, int targetPartition,
             long targetOffset) {
        if (key == null) {
            return;
        }
        records++;
        String origin = FOREIGN;
        int partition = -1;
        long offset = -1;
        long ts = timestamp;
        long logTime = timestamp;
        Comparable<?> field = null;
        String header = text(headers.lastHeader(SOURCE_TOPIC));
        if (header != null) {
            try {
                partition = Integer.parseInt(text(headers.lastHeader(SOURCE_PARTITION)));
                offset = Long.parseLong(text(headers.lastHeader(SOURCE_OFFSET)));
                ts = Long.parseLong(text(headers.lastHeader(SOURCE_TIMESTAMP)));
                String lt = text(headers.lastHeader(SOURCE_LOG_TIME));
                logTime = lt == null ? ts : Long.parseLong(lt);
                field = versionFrom(text(headers.lastHeader(SOURCE_VERSION)));
                origin = topic(header);
            } catch (NumberFormatException | NullPointerException e) {
                origin = FOREIGN;
                partition = -1;
                offset = -1;
                ts = timestamp;
                logTime = timestamp;
                field = null;
            }
        }
        if (origin == FOREIGN) {
            foreignRecords++;
        }
        put(key, new Stamp(origin, partition, offset, ts, logTime, tombstone, field, digest, targetPartition,
                targetOffset));
    }

    /** What the index holds for a key, or null. */
    Stamp stamp(byte[] key) {
        return get(key);
    }

    /** Ends a poll's worth of {@link #add} calls: on disk, they are written as one batch. */
    void flush() {
        if (pending != null && pending.count() > 0) {
            try {
                disk.write(writeOptions, pending);
                pending.clear();
            } catch (RocksDBException e) {
                throw failure("write", e);
            }
        }
    }

    /**
     * Whether a record of version {@code incoming} replaces what the target holds for its key, by the one rule
     * ({@link Version#replaces}): a record another writer wrote (no kbackfill headers) as {@code foreign} says.
     */
    boolean newerWins(byte[] key, Version incoming, Version.ForeignRows foreign) {
        Stamp s = get(key);
        dev.kbackfill.core.version.Held held = s == null ? dev.kbackfill.core.version.Held.NOTHING
                : FOREIGN.equals(s.topic()) ? new dev.kbackfill.core.version.Held.Foreign(null)
                : new dev.kbackfill.core.version.Held.Known(s.version());
        return incoming.replaces(held, foreign);
    }

    /** Whether a record another writer wrote (no kbackfill headers) was indexed. */
    boolean sawForeign() {
        return foreignRecords > 0;
    }

    private long foreignRecords;

    /** Whether the key holds no live value (absent or deleted). */
    boolean absent(byte[] key) {
        Stamp s = get(key);
        return s == null || s.deleted();
    }

    /**
     * Records what this run wrote for a key: the source record's version and whether it is a tombstone. On disk,
     * the writes of a batch go out together at the next {@link #flush()} (or read).
     */
    void written(byte[] key, String topic, int partition, long offset, long timestamp, long logTime,
                 boolean tombstone) {
        written(key, topic, partition, offset, timestamp, logTime, tombstone, null);
    }

    /** {@link #written}, with the source record's version field ({@code --version-field}). */
    void written(byte[] key, String topic, int partition, long offset, long timestamp, long logTime,
                 boolean tombstone, Comparable<?> field) {
        put(key, new Stamp(topic(topic), partition, offset, timestamp, logTime, tombstone, field));
    }

    /** The shared instance of a topic name. */
    private String topic(String name) {
        return topicList.get(number(name));
    }

    private int number(String topic) {
        return topicNumbers.computeIfAbsent(topic, t -> {
            topicList.add(t);
            return topicList.size() - 1;
        });
    }

    private void put(byte[] key, Stamp stamp) {
        if (disk == null) {
            stamps.put(ByteBuffer.wrap(key), stamp);
            if (stamps.size() > memoryKeys) {
                spill();
            }
            return;
        }
        try {
            pending.put(key, encode(stamp));
        } catch (RocksDBException e) {
            throw failure("write", e);
        }
    }

    private Stamp get(byte[] key) {
        if (disk == null) {
            return stamps.get(ByteBuffer.wrap(key));
        }
        flush();
        try {
            byte[] value = disk.get(key);
            return value == null ? null : decode(value);
        } catch (RocksDBException e) {
            throw failure("read", e);
        }
    }

    /** Moves every entry to a new on-disk store; from then on the index lives there. */
    private void spill() {
        RocksDB.loadLibrary();
        try {
            Files.createDirectories(spillParent);
            spillDir = Files.createTempDirectory(spillParent, "kbackfill-index-");
            cache = new LRUCache(32L << 20);
            options = new Options().setCreateIfMissing(true)
                    .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache)
                            .setFilterPolicy(new BloomFilter(10)).setCacheIndexAndFilterBlocks(false));
            writeOptions = new WriteOptions().setDisableWAL(true);
            disk = RocksDB.open(options, spillDir.toString());
            pending = new WriteBatch();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make a directory for the target index under " + spillParent, e);
        } catch (RocksDBException e) {
            throw failure("open", e);
        }
        for (Map.Entry<ByteBuffer, Stamp> e : stamps.entrySet()) {
            put(e.getKey().array(), e.getValue());
            if (pending.count() >= 10_000) {
                flush();
            }
        }
        flush();
        stamps.clear();
    }

    /** The fixed part, then the version field: nothing (none), 8 bytes (a whole number), or UTF-8 text to the end. */
    private byte[] encode(Stamp s) {
        byte[] text = s.field() instanceof String t ? t.getBytes(StandardCharsets.UTF_8) : null;
        int extra = s.field() == null ? 0 : 1 + (text != null ? text.length : 8);
        ByteBuffer b = ByteBuffer.allocate(ENCODED + extra).putInt(number(s.topic())).putInt(s.partition())
                .putLong(s.offset()).putLong(s.timestamp()).putLong(s.logTime()).put((byte) (s.deleted() ? 1 : 0))
                .putLong(s.digest()).putInt(s.targetPartition()).putLong(s.targetOffset());
        if (text != null) {
            b.put((byte) 's').put(text);
        } else if (s.field() != null) {
            b.put((byte) 'i').putLong((Long) s.field());
        }
        return b.array();
    }

    private Stamp decode(byte[] value) {
        ByteBuffer b = ByteBuffer.wrap(value);
        String topic = topicList.get(b.getInt());
        int partition = b.getInt();
        long offset = b.getLong();
        long timestamp = b.getLong();
        long logTime = b.getLong();
        boolean deleted = b.get() == 1;
        long digest = b.getLong();
        int targetPartition = b.getInt();
        long targetOffset = b.getLong();
        Comparable<?> field = null;
        if (b.hasRemaining()) {
            byte type = b.get();
            if (type == 'i') {
                field = b.getLong();
            } else {
                byte[] text = new byte[b.remaining()];
                b.get(text);
                field = new String(text, StandardCharsets.UTF_8);
            }
        }
        return new Stamp(topic, partition, offset, timestamp, logTime, deleted, field, digest, targetPartition,
                targetOffset);
    }

    private SinkException failure(String what, RocksDBException e) {
        return new SinkException("cannot " + what + " the on-disk target index in " + spillDir + ": " + e.getMessage(), e);
    }

    /** Closes the on-disk store and deletes its directory. */
    @Override
    public void close() {
        stamps.clear();
        if (disk == null) {
            return;
        }
        pending.close();
        disk.close();
        writeOptions.close();
        options.close();
        cache.close();
        disk = null;
        try (Stream<Path> files = Files.walk(spillDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind is not worth failing a finished run for
        }
    }

    private static String text(Header h) {
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
