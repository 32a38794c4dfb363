package dev.kbackfill.sink.lake;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A job's lock on a lake table (Delta or Iceberg) in S3, where no lock file can be held open: a lease object
 * {@code TABLE/_kbackfill/locks/JOB.lease} created with a conditional put, renewed by its holder every third of the
 * lease with a conditional replace of the version it wrote, and deleted on release. Another run of the job finds it
 * unexpired and is refused (exit 3) with its holder's name; a holder that died (SIGKILL, a lost machine) leaves a
 * lease that expires, and the next run takes it over with a conditional replace, so of two runs that race for it one
 * wins. A holder that cannot renew in time (a pause longer than the lease, the store unreachable) stops before its
 * next commit: {@link #check()}.
 *
 * <p>Taking a lease also proves that the store honours conditional writes: the second conditional put of the same
 * key must be refused, or two writers could both commit one version of the table's log and one commit would be lost.
 * A store that accepts it is refused before anything is written (exit 2).
 *
 * <p>Expiry compares the holder's clock with the taker's: machines whose clocks differ by more than a lease may take
 * a live lease. The lease lasts {@value #DEFAULT_LEASE_MS} ms unless {@value #LEASE_MS} says otherwise.
 */
public final class ObjectStoreLease implements AutoCloseable {

    /** The Hadoop setting ({@code --sink-property}) with the lease's length in milliseconds. */
    public static final String LEASE_MS = "kbackfill.lock.lease.ms";
    public static final long DEFAULT_LEASE_MS = 60_000;

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Where the lease object lives: the conditional writes a lease needs, of one object (S3, or a fake in tests). */
    interface LeaseObject {
        /** Writes the object unless it exists; whether it was written. */
        boolean createIfAbsent(byte[] bytes) throws IOException;

        /** Replaces the object if it still has {@code etag}; whether it was replaced. */
        boolean replaceIfUnchanged(String etag, byte[] bytes) throws IOException;

        Optional<ConditionalWrites.Stamped> read() throws IOException;

        void delete() throws IOException;

        /** The object, for messages. */
        String name();

        /** One object of a Hadoop filesystem (S3A's conditional writes). */
        static LeaseObject of(FileSystem fs, Path path) {
            return new LeaseObject() {
                @Override
                public boolean createIfAbsent(byte[] bytes) throws IOException {
                    return ConditionalWrites.createIfAbsent(fs, path, bytes);
                }

                @Override
                public boolean replaceIfUnchanged(String etag, byte[] bytes) throws IOException {
                    return ConditionalWrites.replaceIfUnchanged(fs, path, etag, bytes);
                }

                @Override
                public Optional<ConditionalWrites.Stamped> read() throws IOException {
                    return ConditionalWrites.read(fs, path);
                }

                @Override
                public void delete() throws IOException {
                    fs.delete(path, false);
                }

                @Override
                public String name() {
                    return path.toString();
                }
            };
        }
    }

    private final LeaseObject store;
    private final String path;
    private final String job;
    private final String table;
    private final String holder;
    private final long leaseMs;
    private final ScheduledExecutorService renewer;
    private final long since = System.currentTimeMillis();
    private volatile String etag;
    private volatile long heldUntil;
    private volatile String lost;

    private ObjectStoreLease(LeaseObject store, String job, String table, long leaseMs) {
        this.store = store;
        this.path = store.name();
        this.job = job;
        this.table = table;
        this.leaseMs = leaseMs;
        this.holder = holderName();
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kbackfill-lease-" + job);
            t.setDaemon(true);
            return t;
        });
    }

    /** Whether the table at {@code tableRoot} lives in S3 (through S3A), where jobs lock with a lease. */
    public static boolean applies(String tableRoot, Configuration conf) {
        try {
            return ConditionalWrites.isS3a(new Path(tableRoot).getFileSystem(conf));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Takes the lease of {@code job} on the table at {@code tableRoot}.
     *
     * @throws JobConflictException if an unexpired lease of the job is held by another run
     * @throws SinkConfigException  if the store does not honour conditional writes
     */
    public static ObjectStoreLease acquire(String tableRoot, Configuration conf, String job) {
        Path root = new Path(tableRoot);
        long leaseMs = conf.getLong(LEASE_MS, DEFAULT_LEASE_MS);
        if (leaseMs < 1_000) {
            throw new SinkConfigException("invalid " + LEASE_MS + " '" + leaseMs + "': a lease of at least 1000 ms");
        }
        try {
            FileSystem fs = root.getFileSystem(conf);
            return acquire(LeaseObject.of(fs, new Path(root, "_kbackfill/locks/" + job + ".lease")), job,
                    "the table at " + tableRoot, leaseMs);
        } catch (IOException e) {
            throw new SinkException("cannot take the lock of job " + job + " on the table at " + tableRoot + ": "
                    + e.getMessage(), e);
        }
    }

    /** Takes the lease of {@code job} held in {@code store}, renewed every third of {@code leaseMs}. */
    static ObjectStoreLease acquire(LeaseObject store, String job, String table, long leaseMs) throws IOException {
        ObjectStoreLease lease = new ObjectStoreLease(store, job, table, leaseMs);
        lease.take();
        lease.renewer.scheduleWithFixedDelay(lease::renew, leaseMs / 3, leaseMs / 3, TimeUnit.MILLISECONDS);
        return lease;
    }

    private void take() throws IOException {
        for (int attempt = 0; attempt < 5; attempt++) {
            long until = System.currentTimeMillis() + leaseMs;
            byte[] content = content(until);
            if (store.createIfAbsent(content)) {
                if (store.createIfAbsent(content)) {
                    store.delete();
                    throw new SinkConfigException("the object store of " + table + " accepted a second conditional "
                            + "write (If-None-Match) of one object: it does not honour conditional writes, so two "
                            + "writers could both commit one version of the table's log and one commit would be lost; "
                            + "kbackfill writes lake tables on S3 only through stores that do (AWS S3, MinIO and "
                            + "others since 2024)");
                }
                stamp(until);
                return;
            }
            Optional<ConditionalWrites.Stamped> current = store.read();
            if (current.isEmpty()) {
                continue; // released meanwhile
            }
            JsonNode other = JSON.readTree(current.get().bytes());
            long expires = other.path("expires").asLong(0);
            if (expires > System.currentTimeMillis()) {
                throw new JobConflictException("job '" + job + "' is already running against " + table + " (lease "
                        + path + " held by " + other.path("holder").asText("?") + " since "
                        + Instant.ofEpochMilli(other.path("since").asLong(0)) + ", renewed until "
                        + Instant.ofEpochMilli(expires) + "); wait for that run to finish, or if it died, for its "
                        + "lease to expire");
            }
            if (store.replaceIfUnchanged(current.get().etag(), content)) {
                stamp(until); // the holder died: its lease expired at `expires`
                return;
            }
            // another run took the expired lease first: look again
        }
        throw new JobConflictException("job '" + job + "' is already running against " + table + " (its lease "
                + path + " changed hands five times while this run tried to take it)");
    }

    private void stamp(long until) throws IOException {
        Optional<ConditionalWrites.Stamped> mine = store.read();
        if (mine.isEmpty() || !holder.equals(JSON.readTree(mine.get().bytes()).path("holder").asText())) {
            throw new JobConflictException("job '" + job + "' is already running against " + table + " (its lease "
                    + path + " was taken by another run as this one took it)");
        }
        etag = mine.get().etag();
        heldUntil = until;
    }

    private byte[] content(long until) {
        ObjectNode n = JSON.createObjectNode();
        n.put("job", job);
        n.put("holder", holder);
        n.put("since", since);
        n.put("expires", until);
        return n.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Renews the lease: one renewal at a time (the renewer thread's, or {@link #check()}'s when the renewer fell
     * behind), since two at once would both replace the version this run wrote and the second would take the first's
     * success for another run's.
     */
    private synchronized void renew() {
        if (lost != null) {
            return;
        }
        long until = System.currentTimeMillis() + leaseMs;
        try {
            if (!store.replaceIfUnchanged(etag, content(until))) {
                lost = "another run took it over";
                return;
            }
            stamp(until);
        } catch (JobConflictException e) {
            lost = "another run took it over as it was renewed";
        } catch (IOException | RuntimeException e) {
            if (System.currentTimeMillis() >= heldUntil) {
                lost = "it could not be renewed before it expired (" + e.getMessage() + ")";
            }
            // else: try again at the next renewal, while the lease still holds
        }
    }

    /**
     * Fails unless this run still holds the lease with time to spare for a commit (a third of the lease): called
     * before each commit, so a run that lost its lease commits nothing more.
     */
    public void check() {
        if (lost == null && System.currentTimeMillis() > heldUntil - leaseMs / 3) {
            synchronized (this) {
                // the renewer fell behind (a pause, a slow store): renew now or find out, unless the renewal under
                // way when this was called has just done it
                if (lost == null && System.currentTimeMillis() > heldUntil - leaseMs / 3) {
                    renew();
                }
                if (lost == null && System.currentTimeMillis() > heldUntil - leaseMs / 3) {
                    lost = "it was not renewed in time";
                }
            }
        }
        if (lost != null) {
            throw new JobConflictException("this run of job '" + job + "' lost its lease on " + table + ": " + lost
                    + "; it stops before its next commit (what it committed stands; the next run resumes from it)");
        }
    }

    @Override
    public void close() {
        renewer.shutdownNow();
        if (lost != null) {
            return;
        }
        try {
            Optional<ConditionalWrites.Stamped> current = store.read();
            if (current.isPresent() && current.get().etag().equals(etag)) {
                store.delete();
            }
        } catch (IOException e) {
            // the lease expires by itself
        }
    }

    private static String holderName() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "unknown-host";
        }
        return host + " pid " + ProcessHandle.current().pid() + " " + UUID.randomUUID().toString().substring(0, 8);
    }
}
