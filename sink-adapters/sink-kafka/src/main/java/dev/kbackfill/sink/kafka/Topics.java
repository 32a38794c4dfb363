package dev.kbackfill.sink.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.resolver.ClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** What the topic sink and its job store ask of a cluster's admin client: topics described, awaited and measured. */
final class Topics {

    /** How long one request to the cluster may take. */
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    private Topics() {
    }

    /** The settings of {@code config} an admin client takes. */
    static Map<String, Object> adminOnly(Map<String, Object> config) {
        return ClientConfigs.only(config, AdminClientConfig.configNames());
    }

    /** The topic, or null where it does not exist. */
    static TopicDescription describe(Admin admin, String name)
            throws ExecutionException, InterruptedException, TimeoutException {
        try {
            return admin.describeTopics(List.of(name)).allTopicNames().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).get(name);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return null;
            }
            throw e;
        }
    }

    /** Waits until every partition of a new topic answers ListOffsets (producing earlier can wedge: KAFKA-15591). */
    static TopicDescription await(Admin admin, String name) throws InterruptedException, ExecutionException,
            TimeoutException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            try {
                TopicDescription d = describe(admin, name);
                if (d != null) {
                    Map<TopicPartition, OffsetSpec> q = new HashMap<>();
                    d.partitions().forEach(p -> q.put(new TopicPartition(name, p.partition()), OffsetSpec.latest()));
                    admin.listOffsets(q).all().get(5, TimeUnit.SECONDS);
                    return d;
                }
            } catch (ExecutionException | TimeoutException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
            Thread.sleep(100);
        }
    }

    /**
     * A topic's offsets to index: from the earliest to the last stable, once every transaction open when asked has
     * ended. A commit returns before its markers are written, so a run's records just committed (this job's previous
     * run, in this process or another) or a transactional writer's sit above the last stable offset for a moment:
     * read without waiting, a partition whose records are all in such a transaction would look empty.
     *
     * @param bound how long to wait for the last stable offsets to reach the log ends as first asked
     * @return the ranges, and the partitions whose transactions were still open at the bound (indexed to their last
     *         stable offset), each with the offset its open transaction starts from
     */
    static Settled settledRanges(Admin admin, List<Integer> partitions, String name, Duration bound)
            throws InterruptedException, ExecutionException, TimeoutException {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        partitions.forEach(p -> latest.put(new TopicPartition(name, p), OffsetSpec.latest()));
        var ends = admin.listOffsets(latest, new org.apache.kafka.clients.admin.ListOffsetsOptions(
                IsolationLevel.READ_UNCOMMITTED)).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            List<BoundedReader.Range> ranges = ranges(admin, partitions, name);
            Map<Integer, Long> open = new java.util.TreeMap<>();
            for (BoundedReader.Range r : ranges) {
                if (r.end() < ends.get(new TopicPartition(name, r.partition())).offset()) {
                    open.put(r.partition(), r.end());
                }
            }
            if (open.isEmpty() || System.nanoTime() >= deadline) {
                return new Settled(ranges, open);
            }
            Thread.sleep(10);
        }
    }

    /** A topic's ranges to index, and its partitions whose transactions stayed open (their last stable offsets). */
    record Settled(List<BoundedReader.Range> ranges, Map<Integer, Long> open) {
    }

    /** The offsets of a topic's partitions, from the earliest to the last stable. */
    static List<BoundedReader.Range> ranges(Admin admin, List<Integer> partitions, String name)
            throws InterruptedException, ExecutionException, TimeoutException {
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        partitions.forEach(p -> {
            earliest.put(new TopicPartition(name, p), OffsetSpec.earliest());
            latest.put(new TopicPartition(name, p), OffsetSpec.latest());
        });
        var starts = admin.listOffsets(earliest).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        var ends = admin.listOffsets(latest, new org.apache.kafka.clients.admin.ListOffsetsOptions(
                IsolationLevel.READ_COMMITTED)).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        List<BoundedReader.Range> ranges = new ArrayList<>();
        for (int p : partitions) {
            TopicPartition tp = new TopicPartition(name, p);
            ranges.add(new BoundedReader.Range(p, starts.get(tp).offset(), ends.get(tp).offset()));
        }
        return ranges;
    }
}
