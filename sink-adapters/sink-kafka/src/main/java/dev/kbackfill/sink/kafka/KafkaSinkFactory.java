package dev.kbackfill.sink.kafka;

import java.util.List;

import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;

/** {@code --sink kafka:TOPIC}: exactly-once writes into a (compacted) topic of the same or another cluster. */
public final class KafkaSinkFactory implements SinkFactory {

    @Override
    public boolean accepts(String url) {
        return dev.kbackfill.core.sink.SinkUrl.is(url, dev.kbackfill.core.sink.SinkUrl.Kafka.class);
    }

    @Override
    public List<String> forms() {
        return List.of("kafka:TOPIC");
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
        String topic = ((dev.kbackfill.core.sink.SinkUrl.Kafka) settings.sinkUrl()).topic();
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
}
