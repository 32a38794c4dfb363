package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.kbackfill.core.sink.JobConflictException;
import org.junit.jupiter.api.Test;

/** The lease's renewals against an in-memory object with conditional writes (the store's seam). */
class ObjectStoreLeaseTest {

    /** One object with an etag per version; the first renewal can be held inside the store (a slow request). */
    private static final class MemoryObject implements ObjectStoreLease.LeaseObject {
        private byte[] bytes;
        private int version;
        final AtomicInteger replaces = new AtomicInteger();
        final CountDownLatch slowEntered = new CountDownLatch(1);
        final CountDownLatch slowRelease = new CountDownLatch(1);
        final CountDownLatch slowDone = new CountDownLatch(1);

        @Override
        public synchronized boolean createIfAbsent(byte[] b) {
            if (bytes != null) {
                return false;
            }
            bytes = b;
            version++;
            return true;
        }

        @Override
        public boolean replaceIfUnchanged(String etag, byte[] b) throws IOException {
            if (replaces.incrementAndGet() == 1) {
                String before;
                synchronized (this) {
                    before = "v" + version;
                }
                slowEntered.countDown();
                try {
                    slowRelease.await(10, TimeUnit.SECONDS); // the request is in flight for a while
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
                try {
                    synchronized (this) {
                        if (!before.equals(etag) || !("v" + version).equals(etag)) {
                            return false;
                        }
                        bytes = b;
                        version++;
                        return true;
                    }
                } finally {
                    slowDone.countDown();
                }
            }
            synchronized (this) {
                if (bytes == null || !("v" + version).equals(etag)) {
                    return false;
                }
                bytes = b;
                version++;
                return true;
            }
        }

        @Override
        public synchronized Optional<ConditionalWrites.Stamped> read() {
            return bytes == null ? Optional.empty() : Optional.of(new ConditionalWrites.Stamped(bytes, "v" + version));
        }

        @Override
        public synchronized void delete() {
            bytes = null;
        }

        @Override
        public String name() {
            return "memory.lease";
        }
    }

    /**
     * A renewal that takes longer than a third of the lease made the next commit's check renew at the same time: both
     * replaced the version this run wrote, and the second took the first's success for another run's ("another run
     * took it over"), failing a run that held its lease all along.
     */
    @Test
    void aCheckDuringASlowRenewalWaitsForItInsteadOfLosingTheLease() throws Exception {
        MemoryObject store = new MemoryObject();
        long leaseMs = 1500;
        ObjectStoreLease lease = ObjectStoreLease.acquire(store, "job", "memory", leaseMs);
        try {
            assertThat(store.slowEntered.await(5, TimeUnit.SECONDS)).as("the renewer's first renewal started").isTrue();
            Thread.sleep(leaseMs / 3 + 200); // the commit comes while that renewal is still in flight
            Thread checker = new Thread(lease::check);
            checker.start();
            Thread.sleep(200);
            store.slowRelease.countDown();
            checker.join(5_000);
            assertThat(store.slowDone.await(5, TimeUnit.SECONDS)).isTrue();
            Thread.sleep(100); // the renewer has taken in the answer to its slow request
            lease.check(); // the next commit: the lease is this run's
        } finally {
            store.slowRelease.countDown();
            lease.close();
        }
    }

    @Test
    void aLeaseAnotherRunTookOverStopsTheNextCommit() throws Exception {
        MemoryObject store = new MemoryObject();
        store.slowRelease.countDown(); // no slow renewal here
        ObjectStoreLease lease = ObjectStoreLease.acquire(store, "job", "memory", 1500);
        try {
            synchronized (store) {
                store.version++; // another run replaced the object
            }
            Thread.sleep(800); // a renewal meets it
            assertThatThrownBy(lease::check).isInstanceOf(JobConflictException.class)
                    .hasMessageContaining("lost its lease").hasMessageContaining("another run took it over");
        } finally {
            lease.close();
        }
    }
}
