package dev.kbackfill.sink.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.sink.SinkException;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;

/**
 * A cluster's store of job state ({@link dev.kbackfill.core.sink.JobStore}'s role of {@link KafkaSink}): the
 * compacted topic {@value #NAME}, one record per job keyed by its name, whose latest value is the job's state (a
 * tombstone once it is reset). The records are written in the sink's transactions, beside a batch's rows; this
 * reads them back, never behind what this sink committed.
 */
final class JobTopic {

    static final String NAME = "kbackfill-jobs";

    /** The offsets of a topic's partitions, from the earliest to the last stable. */
    @FunctionalInterface
    interface Offsets {
        List<BoundedReader.Range> of(List<Integer> partitions, String topic) throws InterruptedException,
                ExecutionException, TimeoutException;
    }

    private final Map<String, Object> config;
    private final Offsets offsets;
    private final Duration timeout;
    /** The offset after this sink's last committed job record: what its own reads must see. */
    private long writtenUpTo;
    /** The end of the topic when this sink last read the job states. */
    private long readUpTo;

    JobTopic(Map<String, Object> config, Offsets offsets, Duration timeout) {
        this.config = config;
        this.offsets = offsets;
        this.timeout = timeout;
    }

    /** The record that stores {@code state} (JSON) as the job's, or forgets the job ({@code null}). */
    static ProducerRecord<byte[], byte[]> record(String job, String state) {
        return new ProducerRecord<>(NAME, 0, job.getBytes(StandardCharsets.UTF_8),
                state == null ? null : state.getBytes(StandardCharsets.UTF_8));
    }

    /** A job record of this sink's was committed at {@code offset}. */
    void committed(long offset) {
        writtenUpTo = Math.max(writtenUpTo, offset + 1);
    }

    /**
     * The latest state of each job ({@code only} those, or every job when null), read to the topic's end; a job whose
     * latest record is a tombstone (reset) has none.
     *
     * @param action what is being done, for the message of a failure ("read the state of job J")
     */
    Map<String, String> latest(Set<String> only, String action) {
        Map<String, String> latest = new HashMap<>();
        try {
            List<BoundedReader.Range> ranges = offsets.of(List.of(0), NAME);
            // read your own writes: a commit has returned before the last stable offset moved past it (the
            // markers are written after), so wait for it to cover what this sink committed
            long deadline = System.nanoTime() + timeout.toNanos();
            while (ranges.get(0).end() < writtenUpTo && System.nanoTime() < deadline) {
                Thread.sleep(10);
                ranges = offsets.of(List.of(0), NAME);
            }
            if (ranges.get(0).end() < writtenUpTo) {
                throw new SinkException("cannot " + action + " from " + NAME + ": its last stable offset stays at "
                        + ranges.get(0).end() + ", below the job record this run committed at " + (writtenUpTo - 1));
            }
            readUpTo = Math.max(readUpTo, ranges.get(0).end());
            read(ranges, (name, value) -> {
                if (only == null || only.contains(name)) {
                    latest.put(name, value);
                }
            });
        } catch (ExecutionException e) {
            throw new SinkException("cannot " + action + " from " + NAME + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException | InterruptedException e) {
            throw new SinkException("cannot " + action + " from " + NAME + ": " + e, e);
        }
        latest.values().removeIf(java.util.Objects::isNull);
        return latest;
    }

    /**
     * Whether a record of {@code job} was committed after this sink last read the states and after its own last
     * commit: only a run of the job writes its record, so another run has taken the job over. Asked after a
     * transaction failed for no stated reason; looks again until {@code wait} has passed (the run that fenced this
     * one commits its first record shortly after), so a plain failure is reported that much later.
     */
    boolean writtenSince(String job, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        try {
            while (true) {
                long from = Math.max(readUpTo, writtenUpTo);
                BoundedReader.Range whole = offsets.of(List.of(0), NAME).get(0);
                if (whole.end() > from) {
                    boolean[] found = {false};
                    read(List.of(new BoundedReader.Range(0, Math.max(from, whole.start()), whole.end())),
                            (name, value) -> found[0] |= name.equals(job));
                    if (found[0]) {
                        return true;
                    }
                }
                if (System.nanoTime() >= deadline) {
                    return false;
                }
                Thread.sleep(200);
            }
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            return false; // the question cannot be answered: the transaction's own failure is reported
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Each committed record of {@code ranges}, as the job's name and its state (null for a reset). */
    private void read(List<BoundedReader.Range> ranges, java.util.function.BiConsumer<String, String> each)
            throws InterruptedException {
        try (BoundedReader reader = new BoundedReader(NAME, config, IsolationLevel.READ_COMMITTED, ranges, false,
                Duration.ofMinutes(1))) {
            reader.read((records, positions, lost) -> {
                for (SourceRecord r : records) {
                    if (r.key() != null) {
                        each.accept(new String(r.key(), StandardCharsets.UTF_8),
                                r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                    }
                }
            });
        }
    }
}
