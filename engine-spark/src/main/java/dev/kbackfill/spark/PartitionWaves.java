package dev.kbackfill.spark;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.PartitionStats;
import dev.kbackfill.core.run.Rejects;
import dev.kbackfill.core.run.RunFailure;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.run.RunOptions;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.resolver.KafkaOffsetSource;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.PartitionSplit;
import dev.kbackfill.resolver.Plan;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Database and topic sinks on Spark: wave by wave, Spark's Kafka source reads the wave's ranges, one task per source
 * partition (at most {@link SparkJobSpec#maxConnections()} at once) writes its partition's records through the
 * sink exactly as {@code kbackfill run} does, under a <em>sub-job</em> of its own ({@code JOB/pN@RUN}, {@link #subJob}): progress
 * in the sink with the rows, its own lock, a stable transactional id for a topic. A retried or speculative task
 * resumes from, or is fenced by, the sub-job's progress; a rerun of the whole application starts each partition
 * where its sub-job stopped. After each wave the job's own progress moves past it (so {@code status} follows the
 * waves); when the run completes the sub-jobs are forgotten.
 */
final class PartitionWaves {

    private final SparkSession spark;
    private final SparkJobSpec spec;
    private final String specJson;

    PartitionWaves(SparkSession spark, SparkJobSpec spec) {
        this.spark = spark;
        this.spec = spec;
        this.specJson = spec.toJson();
    }

    /**
     * A sub-job's name: the job, the partition, and the job's run ({@link JobState#runId()}: its incarnation and run
     * number), so that neither a fresh plan nor a reset ever meets an earlier run's sub-jobs.
     */
    static String subJob(String job, String runId, int partition) {
        return job + "/p" + partition + "@" + runId;
    }

    /** The run part of the sub-jobs' names; a job stored before incarnations keeps its plan's resolve time. */
    static String runId(JobState state) {
        return state.incarnation().isEmpty() ? Long.toString(state.plan().resolvedAt().toEpochMilli(), 36) : state.runId();
    }

    RunSummary run(BackfillJob.Settings settings, Sink sink, JobState state, RunOptions options, RunListener listener) {
        // sub-jobs are read and forgotten through a sink of their own: the job's sink holds the job's state
        try (JobStore subJobs = SinkFactory.jobStore(TaskContextCache.job(specJson).sinkSettings())) {
            subJobs.openForJobs();
            return run(settings, sink, subJobs, state, options, listener);
        }
    }

    private RunSummary run(BackfillJob.Settings settings, Sink sink, JobStore subJobs, JobState state, RunOptions options,
                           RunListener listener) {
        Shapes.createIfAbsent(spark, spec, sink, state, settings, options); // before any task writes
        Plan plan = state.plan();
        String job = state.job();
        String runId = runId(state);
        RunSummary summary = WaveLoop.run(spark, spec, sink, state, listener, new WaveLoop.Writer() {
            @Override
            public Map<Integer, PartitionSplit> ranges(List<Integer> partitions, JobState current) {
                // from where each partition's sub-job stands: an earlier attempt of this run may have written more
                Map<Integer, PartitionSplit> ranges = new TreeMap<>();
                Map<Integer, Long> progressed = subJobProgress(subJobs, job, runId, plan, partitions);
                for (int p : partitions) {
                    PartitionRange r = plan.partition(p).orElseThrow(() -> new IllegalStateException(
                            "the spec's waves name partition " + p + ", which the plan does not hold"));
                    PartitionSplit rest = current.rest(r);
                    if (!rest.done()) {
                        ranges.put(p, rest.advancedTo(progressed.getOrDefault(p, rest.next())));
                    }
                }
                return ranges;
            }

            @Override
            public WaveLoop.Written write(int wave, Map<Integer, PartitionSplit> ranges, JobState current) {
                return PartitionWaves.this.write(settings, subJobs, current, options, ranges);
            }
        });
        for (PartitionRange r : plan.partitions()) {
            String name = subJob(job, runId, r.partition());
            try (AutoCloseable lock = subJobs.lock(name)) {
                subJobs.reset(name); // the job's own progress holds the run now
            } catch (Exception e) {
                // a leftover sub-job of a finished plan is never consulted again
            }
        }
        return summary;
    }

    /** One wave: a task per source partition (at most the spec's connections at once), each its partition's sub-job. */
    private WaveLoop.Written write(BackfillJob.Settings settings, JobStore subJobs, JobState current, RunOptions options,
                                   Map<Integer, PartitionSplit> ranges) {
        Plan plan = current.plan();
        String job = current.job();
        String runId = runId(current);
        Map<Integer, PartitionSplit> toRead = new TreeMap<>();
        ranges.forEach((p, r) -> {
            if (!r.done()) {
                toRead.put(p, r);
            }
        });
        List<Result> results = new ArrayList<>();
        if (!toRead.isEmpty()) {
            JavaRDD<Row> rows = KafkaRanges.read(spark, plan, toRead,
                    dev.kbackfill.core.read.BoundedReader.withJobClientId(settings.kafkaConfig(), job),
                    options.allowDataLoss(), 0)
                    .javaRDD();
            if (rows.getNumPartitions() > spec.maxConnections()) {
                rows = rows.coalesce(spec.maxConnections()); // a task then writes its partitions one after another
            }
            String json = specJson;
            try {
                results.addAll(rows.mapPartitions(it -> task(json, job, runId, it)).collect());
            } catch (Exception e) { // SparkException is checked in Java's eyes, not Scala's
                throw new RunFailure(SparkFailures.describe(e) + "; " + where(subJobs, job, runId, plan, current), e);
            }
        }
        // a partition no task saw a record of (aborted transactions, compaction) was read to its end all the same.
        // Where its sub-job stands: what the tasks report they committed, or else what the sink holds (a topic's
        // jobs log may not show another producer's last commit yet: its markers come after the commit returns,
        // and a stale read would begin a finished sub-job again)
        Map<Integer, Long> written = new HashMap<>(subJobProgress(subJobs, job, runId, plan, ranges.keySet()));
        for (Result res : results) {
            written.merge(res.stats.partition(), res.stats.next(), Math::max);
        }
        for (int p : ranges.keySet()) {
            PartitionRange r = plan.partition(p).orElseThrow();
            if (!written.containsKey(p) || written.get(p) < r.end()) {
                results.add(runSubJob(specJson, job, runId, p, java.util.Collections.emptyIterator()));
            }
        }
        Map<Integer, PartitionStats> stats = new TreeMap<>();
        long batches = 0;
        for (Result res : results) {
            stats.merge(res.stats.partition(), res.stats, PartitionStats::plus);
            batches += res.batches;
        }
        return new WaveLoop.Written(stats, 0, batches, false);
    }

    /** Where each unfinished partition stands, from its sub-job. */
    private static String where(JobStore sink, String job, String runId, Plan plan, JobState state) {
        Map<Integer, Long> progressed = Map.of();
        try {
            progressed = subJobProgress(sink, job, runId, plan, plan.partitions().stream().map(PartitionRange::partition).toList());
        } catch (RuntimeException e) {
            // the job's own progress then
        }
        List<PartitionSplit> splits = new ArrayList<>();
        for (PartitionRange r : plan.partitions()) {
            PartitionSplit rest = state.rest(r);
            splits.add(rest.advancedTo(progressed.getOrDefault(r.partition(), rest.next())));
        }
        return RunFailure.where(splits);
    }

    /** Per partition, the next offset its sub-job has stored (absent: no sub-job yet), read in one go. */
    private static Map<Integer, Long> subJobProgress(JobStore sink, String job, String runId, Plan plan,
                                                     java.util.Collection<Integer> partitions) {
        Map<String, Integer> names = new java.util.HashMap<>();
        partitions.forEach(p -> names.put(subJob(job, runId, p), p));
        Map<Integer, Long> next = new java.util.HashMap<>();
        sink.loadAll(names.keySet()).forEach((name, s) -> {
            int p = names.get(name);
            next.put(p, s.next(plan.partition(p).orElseThrow()));
        });
        return next;
    }

    /** What a sub-job did, as a task sends it back to the driver. */
    record Result(PartitionStats stats, long batches) implements Serializable {
    }

    /** A Spark task: the sub-job of each source partition its rows hold, one after another. */
    static Iterator<Result> task(String specJson, String job, String runId, Iterator<Row> rows) {
        List<Result> results = new ArrayList<>();
        Lookahead all = new Lookahead(rows);
        while (all.hasNext()) {
            int p = all.peekPartition();
            Iterator<Row> ofPartition = new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return all.hasNext() && all.peekPartition() == p;
                }

                @Override
                public Row next() {
                    if (!hasNext()) {
                        throw new NoSuchElementException();
                    }
                    return all.next();
                }
            };
            results.add(runSubJob(specJson, job, runId, p, ofPartition));
            while (ofPartition.hasNext()) {
                ofPartition.next(); // a sub-job that had nothing to do leaves its rows
            }
        }
        return results.iterator();
    }

    /**
     * Runs one partition's sub-job over its rows: the job on a thread of its own reading a {@link QueueSource},
     * this (the task's) thread handing it the rows.
     */
    static Result runSubJob(String specJson, String job, String runId, int partition, Iterator<Row> rows) {
        SparkJobSpec spec = TaskContextCache.spec(specJson);
        JobDefinition args = TaskContextCache.job(specJson);
        Plan plan = spec.plan();
        PartitionRange range = plan.partition(partition).orElseThrow();
        Plan sub = new Plan(plan.request(), plan.resolvedAt(), plan.fromTime(), plan.toTime(), plan.clusterId(),
                plan.topicId(), plan.timestampType(), List.of(range), plan.notes());
        BlockingQueue<Object> queue = new ArrayBlockingQueue<>(4);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<BackfillJob.Outcome> outcome = new AtomicReference<>();
        Thread runner = new Thread(() -> {
            try (Sink sink = SinkFactory.forSettings(args.sinkSettings());
                 Rejects rejects = args.rejects();
                 KafkaOffsetSource source = KafkaOffsetSource.create(args.kafkaConfig())) {
                BackfillJob.Settings settings = args.withPlan(sub).settings(args.decoder(), rejects).job(subJob(job, runId, partition))
                        .engine(spec.engine()).retryFor(Duration.ZERO).build(); // Spark retries the task
                outcome.set(new BackfillJob(sink, settings, BackfillJob.Events.NONE, RunListener.NONE,
                        BackfillJob.Runner.reading((p, ranges, config, allowDataLoss, stall, maxPoll) ->
                                new QueueSource(queue, ranges.get(0))))
                        .run(() -> BackfillJob.Cluster.of(source, plan.topic())));
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "kbackfill-partition-" + partition);
        runner.setDaemon(true);
        runner.start();
        long failAfter = Faults.failAfterRows();
        try {
            List<SourceRecord> chunk = new ArrayList<>(1000);
            long handed = 0;
            while (rows.hasNext()) {
                chunk.add(KafkaRanges.record(rows.next()));
                if (chunk.size() == 1000 || (failAfter >= 0 && handed + chunk.size() > failAfter)) {
                    hand(queue, chunk, runner);
                    handed += chunk.size();
                    chunk = new ArrayList<>(1000);
                    if (failAfter >= 0 && handed > failAfter) {
                        waitForProgress(queue, runner);
                        failAfter = -1; // once per task
                        Faults.failTaskOnce("writing partition " + partition);
                    }
                }
            }
            if (!chunk.isEmpty()) {
                hand(queue, chunk, runner);
            }
            hand(queue, QueueSource.END, runner);
            runner.join();
        } catch (InterruptedException e) {
            stop(runner);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted writing partition " + partition, e);
        } catch (RuntimeException | Error e) {
            // the task fails: its sub-job stops at its last committed batch before a retry takes over the lock
            stop(runner);
            throw e;
        }
        Throwable t = failure.get();
        if (t instanceof RuntimeException re) {
            throw re;
        }
        if (t instanceof Error err) {
            throw err;
        }
        if (t != null) {
            throw new IllegalStateException(t);
        }
        if (outcome.get() instanceof BackfillJob.Outcome.Completed done) {
            return new Result(done.summary().partitions().get(0), done.summary().batches());
        }
        return new Result(PartitionStats.untouched(PartitionSplit.of(range).advancedTo(range.end())), 0);
    }

    private static void stop(Thread runner) {
        runner.interrupt();
        try {
            runner.join(60_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until the sub-job took what it was handed (an injected failure then follows committed batches). */
    private static void waitForProgress(BlockingQueue<Object> queue, Thread runner) throws InterruptedException {
        while (!queue.isEmpty() && runner.isAlive()) {
            Thread.sleep(20);
        }
        Thread.sleep(500);
    }

    /** Hands an item to the sub-job; once it has stopped (nothing to do, or failed) items are dropped. */
    private static void hand(BlockingQueue<Object> queue, Object item, Thread runner) throws InterruptedException {
        while (!queue.offer(item, 100, TimeUnit.MILLISECONDS)) {
            if (!runner.isAlive()) {
                return;
            }
        }
    }

    /** An iterator of Kafka rows that can look at the next row's partition. */
    private static final class Lookahead {
        private final Iterator<Row> rows;
        private Row head;

        Lookahead(Iterator<Row> rows) {
            this.rows = rows;
        }

        boolean hasNext() {
            return head != null || rows.hasNext();
        }

        int peekPartition() {
            if (head == null) {
                head = rows.next();
            }
            return KafkaRanges.partitionOf(head);
        }

        Row next() {
            if (head != null) {
                Row r = head;
                head = null;
                return r;
            }
            return rows.next();
        }
    }
}
