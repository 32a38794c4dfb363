package dev.kbackfill.core.live;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Per key, its newest record's place in a log, the version rule's without a version field (log time, then partition,
 * then offset: {@link dev.kbackfill.core.version.Version#compare}), keys held as 128-bit hashes
 * ({@link dev.kbackfill.core.record.KeyIdentity#hash128}), in memory that does not grow with the log: up to a budget
 * of entries in an open-addressing table, then in sorted runs in temporary files, looked up by binary search through
 * a memory map with a sparse index of every {@value #FENCE}th entry in the heap. {@link #seal()} merges the runs into
 * one once the bulk of the entries is in (one file to search); entries added later spill into runs of their own.
 * Deleted on {@link #close()}.
 *
 * <p>A log of 100 million keys takes 4 GB of temporary disk (40 bytes a key) and a few hundred kilobytes of heap
 * beyond the budget; a lookup is one binary search in the heap and one page of each file.
 */
public final class KeyVersions implements AutoCloseable {

    /** Bytes per entry in memory: five longs at a load factor of a half. */
    public static final int BYTES_PER_MEMORY_ENTRY = 80;
    /** Longs per entry: the hash's two halves, the log time, the partition, the offset. */
    private static final int STRIDE = 5;
    private static final int ENTRY_BYTES = STRIDE * 8;
    /** Entries between two fence posts of a run's sparse index. */
    private static final int FENCE = 256;
    /** Entries per mapped chunk of a run file (a mapping holds at most 2 GB). */
    private static final long CHUNK_ENTRIES = 1L << 25;

    /** A record's place in the log: what is compared for "newer". */
    public record Place(long logTime, int partition, long offset) {
        /** Whether this place is later than {@code other} by the version rule (log time, partition, offset). */
        public boolean after(Place other) {
            return KeyVersions.after(logTime, partition, offset, other.logTime, other.partition, other.offset);
        }
    }

    private final int memoryEntries;
    private final Path parent;
    private long[] table;
    private int size;
    private final List<Run> runs = new ArrayList<>();
    private Path dir;
    private long spilled;

    /**
     * @param memoryBytes what the in-memory table may take ({@link #BYTES_PER_MEMORY_ENTRY} an entry)
     * @param spillParent where a temporary directory of runs is made, once the table is full
     */
    public KeyVersions(long memoryBytes, Path spillParent) {
        this.memoryEntries = (int) Math.max(1024, Math.min(1 << 26, memoryBytes / BYTES_PER_MEMORY_ENTRY));
        this.parent = spillParent;
        this.table = new long[STRIDE * capacityFor(Math.min(memoryEntries, 4096))];
    }

    static boolean after(long lt, long p, long o, long otherLt, long otherP, long otherO) {
        if (lt != otherLt) {
            return lt > otherLt;
        }
        if (p != otherP) {
            return p > otherP;
        }
        return o > otherO;
    }

    /** Notes a record of the key whose hash is {@code hash} at {@code place}; the key keeps the newer place. */
    public void add(long[] hash, Place place) {
        add(hash[0], hash[1], place.logTime(), place.partition(), place.offset());
    }

    void add(long hi, long lo, long logTime, long partition, long offset) {
        if (hi == 0 && lo == 0) {
            lo = 1; // (0, 0) marks an empty slot; its neighbour stands for it (a collision of 2^-128)
        }
        if (put(table, hi, lo, logTime, partition, offset)) {
            size++;
            if (size >= memoryEntries) {
                spill();
            } else if (size * 2 >= table.length / STRIDE / 2) {
                grow();
            }
        }
    }

    /** The newest place noted for the key whose hash is {@code hash}, or null for none. */
    public Place newest(long[] hash) {
        long hi = hash[0];
        long lo = hash[1];
        if (hi == 0 && lo == 0) {
            lo = 1;
        }
        long[] best = null;
        int i = find(table, hi, lo);
        if (i >= 0) {
            best = new long[] {table[i + 2], table[i + 3], table[i + 4]};
        }
        for (Run r : runs) {
            long[] found = r.find(hi, lo);
            if (found != null && (best == null || after(found[0], found[1], found[2], best[0], best[1], best[2]))) {
                best = found;
            }
        }
        return best == null ? null : new Place(best[0], (int) best[1], best[2]);
    }

    /** Whether nothing was noted. */
    public boolean isEmpty() {
        return size == 0 && runs.isEmpty();
    }

    /** Whether entries went to disk. */
    public boolean spilled() {
        return spilled > 0;
    }

    /** The temporary directory of runs, where entries went to disk. */
    public java.util.Optional<Path> directory() {
        return java.util.Optional.ofNullable(dir);
    }

    /**
     * Merges every run, and what the memory holds where runs exist, into one, so that a lookup searches one file:
     * called once the bulk of the entries is in.
     */
    public void seal() {
        if (runs.isEmpty()) {
            return;
        }
        if (size > 0) {
            spill();
        }
        if (runs.size() == 1) {
            return;
        }
        try {
            Path merged = Files.createTempFile(dir, "merged-", ".keys");
            long entries = 0;
            PriorityQueue<Cursor> heads = new PriorityQueue<>();
            for (Run r : runs) {
                Cursor c = new Cursor(r);
                if (c.advance()) {
                    heads.add(c);
                }
            }
            try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(merged),
                    1 << 16))) {
                long[] pending = null;
                while (!heads.isEmpty()) {
                    Cursor c = heads.poll();
                    if (pending != null && pending[0] == c.e[0] && pending[1] == c.e[1]) {
                        if (after(c.e[2], c.e[3], c.e[4], pending[2], pending[3], pending[4])) {
                            pending = c.e.clone(); // one entry per key, its newest place
                        }
                    } else {
                        if (pending != null) {
                            write(out, pending);
                            entries++;
                        }
                        pending = c.e.clone();
                    }
                    if (c.advance()) {
                        heads.add(c);
                    }
                }
                if (pending != null) {
                    write(out, pending);
                    entries++;
                }
            }
            for (Run r : runs) {
                r.delete();
            }
            runs.clear();
            runs.add(new Run(merged, entries));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot merge the keys spilled to " + dir + ": " + e.getMessage(), e);
        }
    }

    private static void write(DataOutputStream out, long[] e) throws IOException {
        for (long v : e) {
            out.writeLong(v);
        }
    }

    /** The memory table's entries, sorted by hash, into a run file; the table starts again empty. */
    private void spill() {
        long[] sorted = new long[STRIDE * size];
        int n = 0;
        for (int i = 0; i < table.length; i += STRIDE) {
            if (table[i] != 0 || table[i + 1] != 0) {
                System.arraycopy(table, i, sorted, n, STRIDE);
                n += STRIDE;
            }
        }
        sortEntries(sorted, size);
        try {
            if (dir == null) {
                Files.createDirectories(parent);
                dir = Files.createTempDirectory(parent, "kbackfill-keys-");
                dir.toFile().deleteOnExit();
            }
            Path file = Files.createTempFile(dir, "run-", ".keys");
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ByteBuffer buf = ByteBuffer.allocate(1 << 16);
                for (int i = 0; i < sorted.length; i++) {
                    if (!buf.hasRemaining()) {
                        buf.flip();
                        while (buf.hasRemaining()) {
                            ch.write(buf);
                        }
                        buf.clear();
                    }
                    buf.putLong(sorted[i]);
                }
                buf.flip();
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            }
            runs.add(new Run(file, size));
            spilled += size;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot spill keys to " + parent + " (" + e.getMessage()
                    + "): the log holds more keys than the memory budget", e);
        }
        size = 0;
        table = new long[STRIDE * capacityFor(Math.min(memoryEntries, 4096))];
    }

    private void grow() {
        long[] bigger = new long[table.length * 2];
        for (int i = 0; i < table.length; i += STRIDE) {
            if (table[i] != 0 || table[i + 1] != 0) {
                put(bigger, table[i], table[i + 1], table[i + 2], table[i + 3], table[i + 4]);
            }
        }
        table = bigger;
    }

    private static int capacityFor(int entries) {
        int c = 16;
        while (c < entries * 2) {
            c <<= 1;
        }
        return c;
    }

    private static int slot(long hi, long lo, int slots) {
        long h = hi ^ Long.rotateLeft(lo, 17);
        return (int) (h & (slots - 1));
    }

    /** Puts or updates (to the newer place) an entry; true where the key is new to the table. */
    private static boolean put(long[] t, long hi, long lo, long lt, long p, long o) {
        int slots = t.length / STRIDE;
        int i = slot(hi, lo, slots);
        while (true) {
            int at = i * STRIDE;
            if (t[at] == 0 && t[at + 1] == 0) {
                t[at] = hi;
                t[at + 1] = lo;
                t[at + 2] = lt;
                t[at + 3] = p;
                t[at + 4] = o;
                return true;
            }
            if (t[at] == hi && t[at + 1] == lo) {
                if (after(lt, p, o, t[at + 2], t[at + 3], t[at + 4])) {
                    t[at + 2] = lt;
                    t[at + 3] = p;
                    t[at + 4] = o;
                }
                return false;
            }
            i = (i + 1) & (slots - 1);
        }
    }

    /** Where the key's entry starts in {@code t}, or -1. */
    private static int find(long[] t, long hi, long lo) {
        int slots = t.length / STRIDE;
        int i = slot(hi, lo, slots);
        while (true) {
            int at = i * STRIDE;
            if (t[at] == 0 && t[at + 1] == 0) {
                return -1;
            }
            if (t[at] == hi && t[at + 1] == lo) {
                return at;
            }
            i = (i + 1) & (slots - 1);
        }
    }

    /** Unsigned order of hashes (hi, lo), the order of runs. */
    static int compare(long hiA, long loA, long hiB, long loB) {
        int c = Long.compareUnsigned(hiA, hiB);
        return c != 0 ? c : Long.compareUnsigned(loA, loB);
    }

    /** Sorts {@code n} entries of {@link #STRIDE} longs by their hash, in place (a quicksort, no boxing). */
    static void sortEntries(long[] entries, int n) {
        quicksort(entries, 0, n - 1);
    }

    private static void quicksort(long[] p, int from, int to) {
        while (to - from > 16) {
            int mid = (from + to) >>> 1;
            // median of three as the pivot, moved to the end
            if (less(p, mid, from)) {
                swap(p, mid, from);
            }
            if (less(p, to, from)) {
                swap(p, to, from);
            }
            if (less(p, mid, to)) {
                swap(p, mid, to);
            }
            long pivotHi = p[STRIDE * to];
            long pivotLo = p[STRIDE * to + 1];
            int i = from;
            for (int j = from; j < to; j++) {
                if (compare(p[STRIDE * j], p[STRIDE * j + 1], pivotHi, pivotLo) < 0) {
                    swap(p, i++, j);
                }
            }
            swap(p, i, to);
            // the smaller side by recursion, the larger by the loop: the stack stays logarithmic
            if (i - from < to - i) {
                quicksort(p, from, i - 1);
                from = i + 1;
            } else {
                quicksort(p, i + 1, to);
                to = i - 1;
            }
        }
        for (int i = from + 1; i <= to; i++) {
            for (int j = i; j > from && less(p, j, j - 1); j--) {
                swap(p, j, j - 1);
            }
        }
    }

    private static boolean less(long[] p, int a, int b) {
        return compare(p[STRIDE * a], p[STRIDE * a + 1], p[STRIDE * b], p[STRIDE * b + 1]) < 0;
    }

    private static void swap(long[] p, int a, int b) {
        for (int k = 0; k < STRIDE; k++) {
            long v = p[STRIDE * a + k];
            p[STRIDE * a + k] = p[STRIDE * b + k];
            p[STRIDE * b + k] = v;
        }
    }

    @Override
    public void close() {
        for (Run r : runs) {
            r.delete();
        }
        runs.clear();
        if (dir != null) {
            try {
                Files.deleteIfExists(dir);
            } catch (IOException e) {
                // a temporary directory: deleted on exit at the latest
            }
        }
        table = new long[STRIDE * 16];
        size = 0;
    }

    /** A run on disk: entries sorted by hash, one per key within the run. */
    private static final class Run {
        private final Path file;
        private final long entries;
        private final MappedByteBuffer[] chunks;
        private final long[] fenceHi;
        private final long[] fenceLo;

        Run(Path file, long entries) throws IOException {
            this.file = file;
            this.entries = entries;
            int n = (int) ((entries + CHUNK_ENTRIES - 1) / CHUNK_ENTRIES);
            this.chunks = new MappedByteBuffer[n];
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                for (int i = 0; i < n; i++) {
                    long from = i * CHUNK_ENTRIES * ENTRY_BYTES;
                    long len = Math.min(CHUNK_ENTRIES, entries - i * CHUNK_ENTRIES) * ENTRY_BYTES;
                    chunks[i] = ch.map(FileChannel.MapMode.READ_ONLY, from, len);
                }
            }
            int posts = (int) ((entries + FENCE - 1) / FENCE);
            fenceHi = new long[posts];
            fenceLo = new long[posts];
            for (int i = 0; i < posts; i++) {
                fenceHi[i] = at(i * (long) FENCE, 0);
                fenceLo[i] = at(i * (long) FENCE, 1);
            }
        }

        long at(long entry, int field) {
            return chunks[(int) (entry / CHUNK_ENTRIES)].getLong((int) ((entry % CHUNK_ENTRIES) * ENTRY_BYTES + field * 8));
        }

        /** The entry's log time, partition and offset, or null. */
        long[] find(long h, long l) {
            // the last fence post at or below the hash, then the block after it
            int a = 0;
            int b = fenceHi.length - 1;
            if (b < 0 || compare(h, l, fenceHi[0], fenceLo[0]) < 0) {
                return null;
            }
            while (a < b) {
                int m = (a + b + 1) >>> 1;
                if (compare(fenceHi[m], fenceLo[m], h, l) <= 0) {
                    a = m;
                } else {
                    b = m - 1;
                }
            }
            long lo = a * (long) FENCE;
            long hi = Math.min(entries, lo + FENCE) - 1;
            while (lo <= hi) {
                long m = (lo + hi) >>> 1;
                int c = compare(at(m, 0), at(m, 1), h, l);
                if (c == 0) {
                    return new long[] {at(m, 2), at(m, 3), at(m, 4)};
                }
                if (c < 0) {
                    lo = m + 1;
                } else {
                    hi = m - 1;
                }
            }
            return null;
        }

        void delete() {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // a temporary file: deleted with its directory on exit at the latest
            }
        }
    }

    /** Reads a run in order, for the merge. */
    private static final class Cursor implements Comparable<Cursor> {
        private final Run run;
        private long next;
        final long[] e = new long[STRIDE];

        Cursor(Run run) {
            this.run = run;
        }

        boolean advance() {
            if (next >= run.entries) {
                return false;
            }
            for (int k = 0; k < STRIDE; k++) {
                e[k] = run.at(next, k);
            }
            next++;
            return true;
        }

        @Override
        public int compareTo(Cursor o) {
            return compare(e[0], e[1], o.e[0], o.e[1]);
        }
    }
}
