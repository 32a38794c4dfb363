package dev.kbackfill.sink.kafka;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.SinkTarget;

/** {@code --sink kafka:TOPIC}: exactly-once writes into a (compacted) topic of the same or another cluster. */
public final class KafkaSinkFactory implements SinkFactory {

    @Override
    public String scheme() {
        return "kafka";
    }

    @Override
    public String shortForm() {
        return "kafka:TOPIC";
    }

    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(Capability.CLIENT_FILE, Capability.OWN_CLUSTER, Capability.COPIES_RECORDS);
    }

    /**
     * Per-partition sub-jobs under overwrite only: newer-wins and insert-only consult an index of the whole target
     * topic, which every task would have to build.
     */
    @Override
    public OnSpark onSpark(SinkTarget target) {
        if (target.conflict() != dev.kbackfill.core.sink.ConflictMode.OVERWRITE) {
            return new OnSpark.Refused("--engine spark with a topic sink needs --on-conflict overwrite: newer-wins and "
                    + "insert-only consult an index of the whole target topic, which every per-partition task would "
                    + "have to build; run them with --engine local");
        }
        return new OnSpark.PartitionTasks(8);
    }

    /** A topic is compacted by its brokers: kbackfill has nothing of it to rewrite. */
    @Override
    public String compact(SinkSettings settings, Compaction compaction) {
        throw new SinkConfigException("invalid --sink '" + SinkFactory.redact(settings.url()) + "': a topic is "
                + "compacted by its brokers (cleanup.policy=compact); its tombstones go after delete.retention.ms, "
                + "so there is no ledger to prune either");
    }

    @Override
    public List<String> forms() {
        return List.of("kafka:TOPIC");
    }

    /** The topic on its cluster: {@code kafka://HOST:PORT} of the sink's cluster, the topic. */
    @Override
    public Dataset dataset(SinkSettings settings) {
        return SinkFactory.kafkaTopic(KafkaSink.clusterConfig(settings).get("bootstrap.servers"), topic(settings));
    }

    @Override
    public Sink create(SinkSettings settings) {
        return new KafkaSink(settings, topic(settings));
    }

    /** Only the job topic of the sink's cluster: the target topic is not read. */
    @Override
    public JobStore createJobStore(SinkSettings settings) {
        return new JobTopic(settings, topic(settings), KafkaSink.clusterConfig(settings));
    }

    private static String topic(SinkSettings settings) {
        String topic = settings.url().substring("kafka:".length());
        if (!topic.matches("[a-zA-Z0-9._-]{1,249}")) {
            throw new SinkConfigException("invalid --sink '" + settings.url() + "': expected kafka:TOPIC with a topic name "
                    + "of 1 to 249 of a-z A-Z 0-9 . _ -");
        }
        if (topic.equals(settings.source().topic()) && settings.clientConfig().isEmpty()) {
            throw new SinkConfigException("invalid --sink '" + settings.url() + "': it is the source topic; a backfill "
                    + "into the topic it reads would read its own writes");
        }
        return topic;
    }

    /**
     * A topic has no atomic publish: its consumers read each record as it is produced, and a topic is neither renamed
     * nor swapped for another.
     */
    @Override
    public dev.kbackfill.core.sink.Publication publication(SinkSettings settings) {
        throw new dev.kbackfill.core.sink.SinkConfigException("--publish-after-verify is not available for --sink "
                + "kafka:...: a topic has no atomic publish (its consumers read each record as it is produced, and a "
                + "topic cannot be renamed or swapped for another); backfill into a new topic, check it with "
                + "'kbackfill verify', then move the consumers to it");
    }
}
