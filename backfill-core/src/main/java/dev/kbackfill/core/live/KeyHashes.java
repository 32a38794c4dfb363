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
 * A set of 128-bit key hashes ({@link dev.kbackfill.core.record.KeyIdentity#hash128}) that grows with the disk, not
 * with the heap: up to a budget of entries in an open-addressing table in memory, then in sorted runs in temporary
 * files, looked up by binary search through a memory map with a sparse index of every {@value #FENCE}th entry in
 * the heap. {@link #seal()} merges the runs into one once the bulk of the entries is in (one file to search); entries
 * added later spill into runs of their own. Deleted on {@link #close()}.
 *
 * <p>A topic of 100 million keys after a range takes 1.6 GB of temporary disk and a few hundred kilobytes of heap
 * beyond the budget; a lookup is one binary search in the heap and one page of a file.
 */
public final class KeyHashes implements AutoCloseable {

    /** Bytes per entry in memory: two longs at a load factor of a half. */
    public static final int BYTES_PER_MEMORY_ENTRY = 32;
    /** Entries between two fence posts of a run's sparse index. */
    private static final int FENCE = 512;
    /** Entries per mapped chunk of a run file (a mapping holds at most 2 GB). */
    private static final long CHUNK_ENTRIES = 1L << 26;

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
    public KeyHashes(long memoryBytes, Path spillParent) {
        this.memoryEntries = (int) Math.max(1024, Math.min(1 << 28, memoryBytes / BYTES_PER_MEMORY_ENTRY));
        this.parent = spillParent;
        this.table = new long[2 * capacityFor(Math.min(memoryEntries, 4096))];
    }

    /** Adds a hash. */
    public void add(long hi, long lo) {
        if (hi == 0 && lo == 0) {
            lo = 1; // (0, 0) marks an empty slot; its neighbour stands for it (a collision of 2^-128)
        }
        if (insert(table, hi, lo)) {
            size++;
            if (size >= memoryEntries) {
                spill();
            } else if (size * 2 >= table.length / 2) {
                grow();
            }
        }
    }

    /** Adds a hash, given as its two halves, high first. */
    public void add(long[] hash) {
        add(hash[0], hash[1]);
    }

    /** Whether the hash was added. */
    public boolean contains(long hi, long lo) {
        if (hi == 0 && lo == 0) {
            lo = 1;
        }
        if (find(table, hi, lo)) {
            return true;
        }
        for (Run r : runs) {
            if (r.contains(hi, lo)) {
                return true;
            }
        }
        return false;
    }

    public boolean contains(long[] hash) {
        return contains(hash[0], hash[1]);
    }

    /** Whether any hash was added. */
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
     * Merges every run into one, with what the memory holds when runs exist, so that a lookup searches one file:
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
            Path merged = Files.createTempFile(dir, "merged-", ".hashes");
            long entries = 0;
            PriorityQueue<Cursor> heads = new PriorityQueue<>();
            for (Run r : runs) {
                Cursor c = new Cursor(r);
                if (c.advance()) {
                    heads.add(c);
                }
            }
            try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(merged), 1 << 16))) {
                long lastHi = 0;
                long lastLo = 0;
                boolean any = false;
                while (!heads.isEmpty()) {
                    Cursor c = heads.poll();
                    if (!any || c.hi != lastHi || c.lo != lastLo) {
                        out.writeLong(c.hi);
                        out.writeLong(c.lo);
                        entries++;
                        lastHi = c.hi;
                        lastLo = c.lo;
                        any = true;
                    }
                    if (c.advance()) {
                        heads.add(c);
                    }
                }
            }
            for (Run r : runs) {
                r.delete();
            }
            runs.clear();
            runs.add(new Run(merged, entries));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot merge the key hashes spilled to " + dir + ": " + e.getMessage(), e);
        }
    }

    /** The memory table's entries, sorted, into a run file; the table starts again empty. */
    private void spill() {
        long[] sorted = new long[2 * size];
        int n = 0;
        for (int i = 0; i < table.length; i += 2) {
            if (table[i] != 0 || table[i + 1] != 0) {
                sorted[n++] = table[i];
                sorted[n++] = table[i + 1];
            }
        }
        sortPairs(sorted, size);
        try {
            if (dir == null) {
                Files.createDirectories(parent);
                dir = Files.createTempDirectory(parent, "kbackfill-keys-");
                dir.toFile().deleteOnExit();
            }
            Path file = Files.createTempFile(dir, "run-", ".hashes");
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ByteBuffer buf = ByteBuffer.allocate(1 << 16);
                for (int i = 0; i < 2 * size; i++) {
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
            throw new UncheckedIOException("cannot spill key hashes to " + parent + " (" + e.getMessage()
                    + "): the log after the range holds more keys than the memory budget", e);
        }
        size = 0;
        table = new long[2 * capacityFor(Math.min(memoryEntries, 4096))];
    }

    private void grow() {
        long[] bigger = new long[table.length * 2];
        for (int i = 0; i < table.length; i += 2) {
            if (table[i] != 0 || table[i + 1] != 0) {
                insert(bigger, table[i], table[i + 1]);
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

    private static boolean insert(long[] t, long hi, long lo) {
        int slots = t.length / 2;
        int i = slot(hi, lo, slots);
        while (true) {
            long a = t[2 * i];
            long b = t[2 * i + 1];
            if (a == 0 && b == 0) {
                t[2 * i] = hi;
                t[2 * i + 1] = lo;
                return true;
            }
            if (a == hi && b == lo) {
                return false;
            }
            i = (i + 1) & (slots - 1);
        }
    }

    private static boolean find(long[] t, long hi, long lo) {
        int slots = t.length / 2;
        int i = slot(hi, lo, slots);
        while (true) {
            long a = t[2 * i];
            long b = t[2 * i + 1];
            if (a == 0 && b == 0) {
                return false;
            }
            if (a == hi && b == lo) {
                return true;
            }
            i = (i + 1) & (slots - 1);
        }
    }

    /** Unsigned order of (hi, lo) pairs, the order of runs. */
    static int compare(long hiA, long loA, long hiB, long loB) {
        int c = Long.compareUnsigned(hiA, hiB);
        return c != 0 ? c : Long.compareUnsigned(loA, loB);
    }

    /** Sorts {@code n} pairs laid out as hi, lo, hi, lo, ... in place (a quicksort of pairs, no boxing). */
    static void sortPairs(long[] pairs, int n) {
        quicksort(pairs, 0, n - 1);
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
            long pivotHi = p[2 * to];
            long pivotLo = p[2 * to + 1];
            int i = from;
            for (int j = from; j < to; j++) {
                if (compare(p[2 * j], p[2 * j + 1], pivotHi, pivotLo) < 0) {
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
        return compare(p[2 * a], p[2 * a + 1], p[2 * b], p[2 * b + 1]) < 0;
    }

    private static void swap(long[] p, int a, int b) {
        long hi = p[2 * a];
        long lo = p[2 * a + 1];
        p[2 * a] = p[2 * b];
        p[2 * a + 1] = p[2 * b + 1];
        p[2 * b] = hi;
        p[2 * b + 1] = lo;
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
        table = new long[32];
        size = 0;
    }

    /** A sorted run on disk. */
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
                    long from = i * CHUNK_ENTRIES * 16;
                    long len = Math.min(CHUNK_ENTRIES, entries - i * CHUNK_ENTRIES) * 16;
                    chunks[i] = ch.map(FileChannel.MapMode.READ_ONLY, from, len);
                }
            }
            int posts = (int) ((entries + FENCE - 1) / FENCE);
            fenceHi = new long[posts];
            fenceLo = new long[posts];
            for (int i = 0; i < posts; i++) {
                fenceHi[i] = hi(i * (long) FENCE);
                fenceLo[i] = lo(i * (long) FENCE);
            }
        }

        long hi(long entry) {
            return chunks[(int) (entry / CHUNK_ENTRIES)].getLong((int) ((entry % CHUNK_ENTRIES) * 16));
        }

        long lo(long entry) {
            return chunks[(int) (entry / CHUNK_ENTRIES)].getLong((int) ((entry % CHUNK_ENTRIES) * 16 + 8));
        }

        boolean contains(long h, long l) {
            // the last fence post at or below the hash, then the block after it
            int a = 0;
            int b = fenceHi.length - 1;
            if (b < 0 || compare(h, l, fenceHi[0], fenceLo[0]) < 0) {
                return false;
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
                int c = compare(hi(m), lo(m), h, l);
                if (c == 0) {
                    return true;
                }
                if (c < 0) {
                    lo = m + 1;
                } else {
                    hi = m - 1;
                }
            }
            return false;
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
        long hi;
        long lo;

        Cursor(Run run) {
            this.run = run;
        }

        boolean advance() {
            if (next >= run.entries) {
                return false;
            }
            hi = run.hi(next);
            lo = run.lo(next);
            next++;
            return true;
        }

        @Override
        public int compareTo(Cursor o) {
            return compare(hi, lo, o.hi, o.lo);
        }
    }
}
