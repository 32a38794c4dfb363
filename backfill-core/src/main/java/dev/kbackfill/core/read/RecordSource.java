package dev.kbackfill.core.read;

import java.util.List;
import java.util.Map;

import dev.kbackfill.resolver.Plan;

/**
 * Where a run's records come from: the plan's ranges, each partition in offset order, handed over poll by poll with
 * the position reached. {@link BoundedReader} reads them from Kafka itself; an engine that reads with its own Kafka
 * source (Spark's) hands its records over through the same contract, so that the run loop, its batching and its
 * progress stay one.
 */
public interface RecordSource extends AutoCloseable {

    /**
     * Reads every range to its end, calling {@code handler} for each poll; returns once every range is read or
     * {@link #stop()} was called.
     */
    void read(BoundedReader.Handler handler) throws InterruptedException;

    /** Makes a {@link #read} in progress return soon; callable from any thread. */
    void stop();

    @Override
    void close();

    /** Opens the source of one run. */
    interface Factory {
        /**
         * @param plan          the run's plan
         * @param ranges        what is left to read of it
         * @param clientConfig  the reader's Kafka client settings
         * @param maxPoll       the most records one hand-over may carry
         */
        RecordSource open(Plan plan, List<BoundedReader.Range> ranges, Map<String, Object> clientConfig,
                          boolean allowDataLoss, java.time.Duration stallTimeout, int maxPoll);

        /**
         * Kafka, read by {@link BoundedReader}: assign, seek, poll to the end of every range; polled on a thread of
         * its own ({@link ReadAhead}, two polls ahead), so that the run decodes one poll while the next is fetched.
         * A plan that reads the topic's archive ({@link dev.kbackfill.resolver.BackfillRequest#archive()}) reads each
         * partition's part below the seam from it first ({@link dev.kbackfill.core.read.archive.ArchiveSource}).
         */
        Factory KAFKA = (plan, ranges, config, allowDataLoss, stall, maxPoll) -> plan.request().archive().isPresent()
                ? dev.kbackfill.core.read.archive.ArchiveSource.open(Factory.TOPIC, plan, ranges, config, allowDataLoss,
                        stall, maxPoll)
                : Factory.TOPIC.open(plan, ranges, config, allowDataLoss, stall, maxPoll);

        /**
         * The topic alone, read by {@link BoundedReader} on a thread of its own: {@link #KAFKA} without the archive a
         * plan may read below the topic's log start.
         */
        Factory TOPIC = (plan, ranges, config, allowDataLoss, stall, maxPoll) -> {
            Map<String, Object> readerConfig = new java.util.HashMap<>(config);
            readerConfig.putIfAbsent("max.poll.records", maxPoll);
            return new ReadAhead(new BoundedReader(plan.topic(), readerConfig, plan.request().isolationLevel(), ranges,
                    allowDataLoss, stall), 2);
        };
    }
}
