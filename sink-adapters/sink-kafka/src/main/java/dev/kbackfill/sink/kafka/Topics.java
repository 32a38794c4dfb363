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
        Map<Integer, Long> ends = offsets(admin, partitions, name, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            Map<Integer, Long> stable = offsets(admin, partitions, name, OffsetSpec.latest(),
                    IsolationLevel.READ_COMMITTED);
            Map<Integer, Long> open = new java.util.TreeMap<>(stable);
            open.entrySet().removeIf(e -> e.getValue() >= ends.get(e.getKey()));
            if (open.isEmpty() || System.nanoTime() >= deadline) {
                return new Settled(ranges(admin, partitions, name, stable), open);
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
        return ranges(admin, partitions, name, offsets(admin, partitions, name, OffsetSpec.latest(),
                IsolationLevel.READ_COMMITTED));
    }

    /** The offsets of a topic's partitions, from the earliest (asked now) to {@code ends}. */
    private static List<BoundedReader.Range> ranges(Admin admin, List<Integer> partitions, String name,
            Map<Integer, Long> ends) throws InterruptedException, ExecutionException, TimeoutException {
        Map<Integer, Long> starts = offsets(admin, partitions, name, OffsetSpec.earliest(),
                IsolationLevel.READ_UNCOMMITTED);
        List<BoundedReader.Range> ranges = new ArrayList<>();
        for (int p : partitions) {
            ranges.add(new BoundedReader.Range(p, starts.get(p), ends.get(p)));
        }
        return ranges;
    }

    /** One ListOffsets question for every partition of a topic: each partition's offset. */
    private static Map<Integer, Long> offsets(Admin admin, List<Integer> partitions, String name, OffsetSpec spec,
            IsolationLevel isolation) throws InterruptedException, ExecutionException, TimeoutException {
        Map<TopicPartition, OffsetSpec> q = new HashMap<>();
        partitions.forEach(p -> q.put(new TopicPartition(name, p), spec));
        var answers = admin.listOffsets(q, new org.apache.kafka.clients.admin.ListOffsetsOptions(isolation)).all()
                .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        Map<Integer, Long> offsets = new HashMap<>();
        answers.forEach((tp, info) -> offsets.put(tp.partition(), info.offset()));
        return offsets;
    }
}
