package dev.kbackfill.core.verify;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.Reduction;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.BatchWriter;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;

/**
 * The final state of every key of a range, folded by the run loop itself: the {@link BatchWriter} a
 * {@link dev.kbackfill.core.run.BackfillRun} writes into, so that verification reads, filters, decodes, stamps
 * version fields and reduces exactly as a run does, and keeps per key the change that the one version rule keeps
 * ({@link Reduction#isLater}).
 *
 * <p>Memory stays bounded whatever the range: keys are held in memory up to a budget of bytes (their raw records
 * and about {@value #BYTES_PER_KEY} bytes of objects each) or of keys, whichever comes first; past that, every
 * change goes to one of several bucket files on disk by the hash of its key (its raw record, its log time and its
 * version field), and {@link #forEachChunk} folds one bucket at a time, each holding a fraction of the keys.
 */
public final class RangeFold implements BatchWriter, AutoCloseable {

    private final RecordDecoder decoder;
    /** What a held key costs beyond its raw record's bytes: its identity, change, record and map entry objects. */
    static final int BYTES_PER_KEY = 600;

    private final long memoryKeys;
    private final long memoryBytes;
    private final long records;
    private int buckets;
    private long heldBytes;
    private final Path spillParent;
    private final Map<KeyIdentity, Change> held = new HashMap<>();
    private Path spillDir;
    /** Given the key fields at the first spill, the target's join key of a change, or null to bucket by identity. */
    private java.util.function.Function<List<String>, java.util.function.Function<Change, String>> joinFor = f -> null;
    private java.util.function.Function<Change, String> joinKey;
    private long[] bloom;
    private DataOutputStream[] spills;
    private String topic = "";

    /**
     * @param decoder       decodes spilled records again when their bucket is folded
     * @param memoryKeys    keys held in memory at most before spilling
     * @param memoryBytes   bytes held in memory at most before spilling ({@link #BYTES_PER_KEY} a key, and its raw
     *                      record)
     * @param records       the records of the range at most (sizes the buckets so that each fits in memory)
     * @param spillParent   where bucket files go (a temporary directory of its own is made in it)
     */
    public RangeFold(RecordDecoder decoder, long memoryKeys, long memoryBytes, long records, Path spillParent) {
        this.decoder = decoder;
        this.memoryKeys = Math.max(1, memoryKeys);
        this.memoryBytes = Math.max(1, memoryBytes);
        this.records = records;
        this.spillParent = spillParent;
    }

    /**
     * Buckets spilled keys by the join key {@code joinFor} gives for the range's key fields (a target read in one
     * pass), so that the target's rows can be streamed into the same buckets ({@link #streamTarget}).
     */
    public void joinOn(java.util.function.Function<List<String>, java.util.function.Function<Change, String>> joinFor) {
        this.joinFor = joinFor;
    }

    /** Whether the fold went to disk. */
    public boolean spilled() {
        return spills != null || spillDir != null;
    }

    @Override
    public boolean copiesSourceRecords() {
        return true; // a spilled change is its raw record, decoded again when its bucket is folded
    }

    /** Values are decoded when a key is judged, for the surviving change of each key only. */
    @Override
    public boolean needsValues() {
        return false;
    }

    /** The topic of the range folded (the run writes none of its state here). */
    public void begin(JobState state) {
        topic = state.plan().topic();
    }

    @Override
    public WriteResult write(WriteBatch batch) {
        for (Change c : batch.changes()) {
            if (spills == null) {
                // held without its decoded values (its raw record stays): a key costs half the memory, and its values
                // are decoded again when it is judged
                Change compact = c.source() == null ? c
                        : Change.undecoded(c.key(), headerColumnsOnly(c.source())).withVersionField(c.versionField());
                KeyIdentity key = KeyIdentity.of(c.key());
                Change before = held.get(key);
                if (before == null || Reduction.isLater(compact, before)) {
                    held.put(key, compact);
                    heldBytes += bytes(compact) - (before == null ? 0 : bytes(before));
                }
                if (held.size() > memoryKeys || heldBytes > memoryBytes) {
                    startSpilling();
                }
            } else {
                spill(c);
            }
        }
        return new WriteResult(batch.changes().size(), 0, 0);
    }

    /** Headers take part in decoding only as header columns: a held record keeps those and drops the rest. */
    private static final org.apache.kafka.common.header.internals.RecordHeaders NO_HEADERS = noHeaders();

    private static org.apache.kafka.common.header.internals.RecordHeaders noHeaders() {
        org.apache.kafka.common.header.internals.RecordHeaders h = new org.apache.kafka.common.header.internals.RecordHeaders();
        h.setReadOnly();
        return h;
    }

    /** The record with only the headers that become columns ({@code --header-columns}), each its last value. */
    private SourceRecord headerColumnsOnly(SourceRecord r) {
        return new SourceRecord(r.topic(), r.partition(), r.offset(), r.timestamp(), r.logTime(), r.key(), r.value(),
                headerColumns(r.headers()));
    }

    private org.apache.kafka.common.header.Headers headerColumns(org.apache.kafka.common.header.Headers headers) {
        List<String> names = decoder.mapping().headerColumns();
        if (names.isEmpty() || headers == null) {
            return NO_HEADERS;
        }
        org.apache.kafka.common.header.internals.RecordHeaders kept = new org.apache.kafka.common.header.internals.RecordHeaders();
        for (String name : names) {
            org.apache.kafka.common.header.Header last = headers.lastHeader(name);
            if (last != null) {
                kept.add(name, last.value());
            }
        }
        return kept;
    }

    private static long bytes(Change c) {
        SourceRecord r = c.source();
        return BYTES_PER_KEY + (r == null ? 0 : (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length));
    }

    private void startSpilling() {
        joinKey = joinFor.apply(dev.kbackfill.core.verify.TargetLookup.keyFields(new ArrayList<>(held.values())));
        if (joinKey != null) {
            // a Bloom filter of the join keys, 10 bits a record, at most 16 MB: what the target streams through
            bloom = new long[(int) Math.max(16, Math.min(1L << 21, records * 10 / 64 + 1))];
        }
        // buckets so that each holds about half of what fits in memory, at the keys' size so far
        long fits = Math.max(1, Math.min(memoryKeys, memoryBytes / Math.max(1, heldBytes / Math.max(1, held.size()))));
        buckets = (int) Math.max(2, Math.min(4096, 2 * records / fits + 1));
        try {
            spillDir = Files.createTempDirectory(spillParent, "kbackfill-verify-");
            spills = new DataOutputStream[buckets];
            for (int b = 0; b < buckets; b++) {
                spills[b] = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(bucket(b)), 1 << 14));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot spill the range's keys to disk in " + spillParent + ": "
                    + e.getMessage(), e);
        }
        held.values().forEach(this::spill);
        held.clear();
        heldBytes = 0;
    }

    private Path bucket(int b) {
        return spillDir.resolve("bucket-" + b);
    }

    private int bucketOf(Change c) {
        if (joinKey != null) {
            String k = joinKey.apply(c);
            if (k != null) {
                addToBloom(k);
            }
            return bucketOfJoin(k == null ? "" : k);
        }
        return bucketOfHash(KeyIdentity.of(c.key()).hashCode());
    }

    private int bucketOfJoin(String k) {
        return bucketOfHash(k.hashCode());
    }

    private int bucketOfHash(int hash) {
        int h = hash * 0x9E3779B9;
        return Math.floorMod(h ^ (h >>> 16), buckets);
    }

    private static long[] hashes(String k) {
        long h1 = 0x9E3779B97F4A7C15L;
        long h2 = 0xC2B2AE3D27D4EB4FL;
        for (int i = 0; i < k.length(); i++) {
            h1 = (h1 ^ k.charAt(i)) * 0x100000001B3L;
            h2 = Long.rotateLeft(h2 ^ k.charAt(i), 31) * 0x9E3779B97F4A7C15L;
        }
        return new long[] {h1 ^ (h1 >>> 29), h2 ^ (h2 >>> 32)};
    }

    /** The Bloom filter's 7 bit positions for {@code k}. */
    private long[] bits(String k) {
        long[] h = hashes(k);
        long size = (long) bloom.length * 64;
        long[] bits = new long[7];
        for (int i = 0; i < bits.length; i++) {
            bits[i] = Math.floorMod(h[0] + i * h[1], size);
        }
        return bits;
    }

    private void addToBloom(String k) {
        for (long bit : bits(k)) {
            bloom[(int) (bit >>> 6)] |= 1L << (bit & 63);
        }
    }

    private boolean mayHold(String k) {
        for (long bit : bits(k)) {
            if ((bloom[(int) (bit >>> 6)] & (1L << (bit & 63))) == 0) {
                return false;
            }
        }
        return true;
    }

    /** Whether the spilled keys are bucketed by a target's join key ({@link #joinOn}). */
    public boolean joined() {
        return joinKey != null;
    }

    /**
     * Streams the target's rows that may hold a spilled key into target bucket files beside the fold's, once; read
     * back per bucket by {@link #forEachChunk}'s bucket number ({@link #targetRows}). Returns the rows streamed.
     */
    public long streamTarget(dev.kbackfill.core.verify.TargetLookup.Scan scan) {
        DataOutputStream[] out = new DataOutputStream[buckets];
        long[] rows = {0};
        try {
            for (int b = 0; b < buckets; b++) {
                out[b] = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(targetBucket(b)), 1 << 14));
            }
            scan.rows(this::mayHold, (k, row) -> {
                try {
                    DataOutputStream o = out[bucketOfJoin(k)];
                    bytes(o, k.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                    bytes(o, row);
                    rows[0]++;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            for (DataOutputStream o : out) {
                o.close();
            }
            return rows[0];
        } catch (IOException | UncheckedIOException e) {
            throw new UncheckedIOException("cannot spill the target's rows to disk in " + spillDir + ": "
                    + e.getMessage(), e instanceof IOException io ? io : ((UncheckedIOException) e).getCause());
        }
    }

    /** The target's rows streamed into bucket {@code b}, by join key. */
    public Map<String, List<byte[]>> targetRows(int b) {
        Map<String, List<byte[]>> rows = new HashMap<>();
        Path file = targetBucket(b);
        if (!Files.exists(file)) {
            return rows;
        }
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 14))) {
            while (true) {
                byte[] k;
                try {
                    k = bytes(in);
                } catch (EOFException end) {
                    break;
                }
                rows.computeIfAbsent(new String(k, java.nio.charset.StandardCharsets.UTF_8), x -> new ArrayList<>(1))
                        .add(bytes(in));
            }
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the target's rows back from " + spillDir + ": " + e.getMessage(), e);
        }
        return rows;
    }

    private Path targetBucket(int b) {
        return spillDir.resolve("target-" + b);
    }

    private void spill(Change c) {
        SourceRecord r = c.source();
        if (r == null) {
            throw new IllegalStateException("a change without its raw record cannot be spilled");
        }
        DataOutputStream out = spills[bucketOf(c)];
        try {
            out.writeInt(r.partition());
            out.writeLong(r.offset());
            out.writeLong(r.timestamp());
            out.writeLong(r.logTime());
            bytes(out, r.key());
            bytes(out, r.value());
            org.apache.kafka.common.header.Header[] headers = headerColumns(r.headers()).toArray();
            out.writeShort(headers.length);
            for (org.apache.kafka.common.header.Header h : headers) {
                out.writeUTF(h.key());
                bytes(out, h.value());
            }
            Comparable<?> field = c.versionField();
            if (field == null) {
                out.writeByte(0);
            } else if (field instanceof Long l) {
                out.writeByte(1);
                out.writeLong(l);
            } else {
                out.writeByte(2);
                out.writeUTF(field.toString());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot spill the range's keys to disk in " + spillDir + ": "
                    + e.getMessage(), e);
        }
    }

    private static void bytes(DataOutputStream out, byte[] b) throws IOException {
        if (b == null) {
            out.writeInt(-1);
        } else {
            out.writeInt(b.length);
            out.write(b);
        }
    }

    private static byte[] bytes(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    /**
     * Hands over the final change of every key, in chunks of at most {@code chunk} keys: the keys held in memory, or
     * one bucket after another, each folded on its own. Values may be undecoded: {@link #decoded} decodes them.
     */
    public void forEachChunk(int chunk, Consumer<List<Change>> judge) {
        forEachChunk(chunk, (bucket, part) -> judge.accept(part));
    }

    /** {@link #forEachChunk}, with each chunk's bucket number (-1 for keys held in memory). */
    public void forEachChunk(int chunk, java.util.function.BiConsumer<Integer, List<Change>> judge) {
        if (spills == null) {
            List<Change> all = new ArrayList<>(held.values());
            held.clear();
            for (int from = 0; from < all.size(); from += chunk) {
                int to = Math.min(all.size(), from + chunk);
                judge.accept(-1, new ArrayList<>(all.subList(from, to)));
                for (int i = from; i < to; i++) {
                    all.set(i, null); // judged keys leave memory as their chunk goes
                }
            }
            return;
        }
        try {
            for (DataOutputStream out : spills) {
                out.close();
            }
            spills = null;
            boolean keyOnly = decoder.keyedByRecordKey();
            for (int b = 0; b < buckets; b++) {
                Map<KeyIdentity, Change> fold = new HashMap<>();
                try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(bucket(b)), 1 << 14))) {
                    while (true) {
                        int partition;
                        try {
                            partition = in.readInt();
                        } catch (EOFException end) {
                            break;
                        }
                        long offset = in.readLong();
                        long timestamp = in.readLong();
                        long logTime = in.readLong();
                        byte[] key = bytes(in);
                        byte[] value = bytes(in);
                        org.apache.kafka.common.header.Headers headers = NO_HEADERS;
                        int headerCount = in.readShort();
                        if (headerCount > 0) {
                            headers = new org.apache.kafka.common.header.internals.RecordHeaders();
                            for (int h = 0; h < headerCount; h++) {
                                headers.add(in.readUTF(), bytes(in));
                            }
                        }
                        byte kind = in.readByte();
                        Comparable<?> field = kind == 0 ? null : kind == 1 ? (Comparable<?>) in.readLong() : in.readUTF();
                        SourceRecord r = new SourceRecord(topic, partition, offset, timestamp, logTime, key, value,
                                headers);
                        // the key alone where it is the record key: values are decoded when judged
                        Change c = keyOnly ? decoder.decodeKey(r).withVersionField(field)
                                : decoder.decode(r).withVersionField(field);
                        fold.merge(KeyIdentity.of(c.key()), c, (before, now) -> Reduction.isLater(now, before) ? now : before);
                    }
                }
                Files.deleteIfExists(bucket(b));
                List<Change> survivors = new ArrayList<>(fold.values());
                fold.clear();
                int bucket = b;
                emit(survivors, joinKey != null ? Integer.MAX_VALUE : chunk, part -> judge.accept(bucket, part));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the range's keys back from " + spillDir + ": " + e.getMessage(), e);
        }
    }

    /**
     * The change with its values decoded from its raw record, as a run decodes them; null for a record whose value
     * cannot be decoded (a poison record: a run fails on it, skips it or keeps it aside; its key is not judged).
     */
    public Change decoded(Change c) {
        if (c.isDecoded()) {
            return c;
        }
        try {
            return decoder.decode(c.source()).withVersionField(c.versionField());
        } catch (dev.kbackfill.core.record.DecodeException e) {
            return null;
        }
    }

    private static void emit(List<Change> changes, int chunk, Consumer<List<Change>> judge) {
        for (int from = 0; from < changes.size(); from += chunk) {
            judge.accept(changes.subList(from, Math.min(changes.size(), from + chunk)));
        }
    }

    @Override
    public void close() {
        held.clear();
        if (spills != null) {
            for (DataOutputStream out : spills) {
                try {
                    out.close();
                } catch (IOException ignored) {
                    // deleted below
                }
            }
            spills = null;
        }
        if (spillDir != null) {
            try (var files = Files.walk(spillDir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException ignored) {
                // a temporary directory
            }
            spillDir = null;
        }
    }
}
