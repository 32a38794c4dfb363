package dev.kbackfill.core.run;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.resolver.KafkaOffsetSource;
import dev.kbackfill.resolver.TopicInfo;

/**
 * A job wired for one run: the one composition root the command line, the Spark launcher and the Spark driver share.
 * It opens the sink of the job's destination (through its kind's factory), the destination of records that cannot be
 * decoded, and the cluster side (a Kafka client connected and the topic described, in the background while the sink
 * opens: most of a short run's first second is those two, and neither needs the other); {@link #protocol} builds the
 * job's protocol over them with the caller's events, listener and runner. Closing it closes what it opened.
 *
 * <pre>{@code
 * try (JobRun wired = JobRun.open(job, job.decoder())) {
 *     BackfillJob protocol = wired.protocol(events, listener, BackfillJob.Runner.LOCAL);
 *     BackfillJob.Outcome outcome = protocol.run(wired.cluster());
 * }
 * }</pre>
 */
public final class JobRun implements AutoCloseable {

    private final JobDefinition job;
    private final RecordDecoder decoder;
    private final CompletableFuture<ClusterSide> cluster;
    private final Sink sink;
    private final Rejects rejects;

    private JobRun(JobDefinition job, RecordDecoder decoder, CompletableFuture<ClusterSide> cluster, Sink sink,
                   Rejects rejects) {
        this.job = job;
        this.decoder = decoder;
        this.cluster = cluster;
        this.sink = sink;
        this.rejects = rejects;
    }

    /**
     * The job's parts, the cluster side started in the background.
     *
     * @throws dev.kbackfill.core.sink.SinkConfigException a destination its kind cannot use (the cluster side is
     *                                                     closed again)
     */
    public static JobRun open(JobDefinition job, RecordDecoder decoder) {
        Map<String, Object> config = job.kafkaConfig();
        String topic = job.request().topic();
        return open(job, decoder, config, CompletableFuture.supplyAsync(() -> ClusterSide.start(config, topic)));
    }

    /**
     * The job's parts without a cluster side: for a run whose protocol was decided elsewhere
     * ({@link BackfillJob#runLaunched}), which never asks the cluster.
     */
    public static JobRun openDecided(JobDefinition job, RecordDecoder decoder) {
        return open(job, decoder, job.kafkaConfig(), null);
    }

    private static JobRun open(JobDefinition job, RecordDecoder decoder, Map<String, Object> config,
                               CompletableFuture<ClusterSide> cluster) {
        Sink sink = null;
        try {
            sink = SinkFactory.forSettings(job.sinkSettings(config));
            return new JobRun(job, decoder, cluster, sink, job.rejects(config));
        } catch (RuntimeException e) {
            if (sink != null) {
                sink.close();
            }
            if (cluster != null) {
                cluster.thenAccept(ClusterSide::close);
            }
            throw e;
        }
    }

    /** The job's sink, not yet opened: the protocol opens it. */
    public Sink sink() {
        return sink;
    }

    /** Where records that cannot be decoded go. */
    public Rejects rejects() {
        return rejects;
    }

    /** The job's protocol over these parts, reporting to {@code events} and {@code listener}, running by {@code runner}. */
    public BackfillJob protocol(BackfillJob.Events events, RunListener listener, BackfillJob.Runner runner) {
        return new BackfillJob(sink, job.settings(decoder, rejects).build(), events, listener, runner);
    }

    /**
     * The cluster side, for {@link BackfillJob#run}: waits for its start, and throws what the start threw (an
     * unreachable cluster, a topic that cannot be described) when the protocol asks, after the sink's own checks.
     *
     * @throws IllegalStateException for parts opened without a cluster side ({@link #openDecided})
     */
    public Supplier<BackfillJob.Cluster> cluster() {
        if (cluster == null) {
            throw new IllegalStateException("a run of " + job.request().topic() + " wired without a cluster side");
        }
        return () -> {
            try {
                return cluster.join();
            } catch (CompletionException e) {
                if (e.getCause() instanceof RuntimeException re) {
                    throw re;
                }
                throw e;
            }
        };
    }

    /** Runs the protocol with the cluster side. */
    public BackfillJob.Outcome run(BackfillJob protocol) {
        return protocol.run(cluster());
    }

    @Override
    public void close() {
        try (Sink s = sink; Rejects r = rejects) {
            Optional.ofNullable(cluster).ifPresent(c -> c.thenAccept(ClusterSide::close));
        }
    }

    /**
     * The Kafka client of a run, started in the background: connected, and the topic described once (a failure to
     * describe it is kept and thrown when the run asks, after the sink's own checks).
     */
    private record ClusterSide(KafkaOffsetSource source, TopicInfo described, RuntimeException describeFailure)
            implements AutoCloseable, BackfillJob.Cluster {

        static ClusterSide start(Map<String, Object> config, String topic) {
            KafkaOffsetSource source = KafkaOffsetSource.create(config);
            try {
                return new ClusterSide(source, source.describe(topic), null);
            } catch (RuntimeException e) {
                return new ClusterSide(source, null, e);
            }
        }

        @Override
        public TopicInfo topic() {
            if (describeFailure != null) {
                throw describeFailure;
            }
            return described;
        }

        @Override
        public void close() {
            source.close();
        }
    }
}
