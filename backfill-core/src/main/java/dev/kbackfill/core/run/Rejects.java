package dev.kbackfill.core.run;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Base64;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.resolver.ClientConfigs;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * What happens to a poison record, one that cannot be decoded or that the sink refuses: the run fails naming it (the
 * default), it is skipped and counted, or it goes to a dead-letter destination with its coordinates and the error.
 * Dead letters are made durable ({@link #flush()}, which fails if any could not be written) before the progress that
 * passes them is committed, so none is lost to a crash or a failed send.
 */
public interface Rejects extends AutoCloseable {

    /** Handles one poison record; throws to fail the run. */
    void reject(SourceRecord record, RuntimeException error);

    /**
     * Makes every rejected record durable.
     *
     * @throws DeadLetterException if one could not be written: the batch that passes it must not commit
     */
    default void flush() {
    }

    /** Where rejected records go, for the summary, or empty when they fail the run or are only counted. */
    default String destination() {
        return "";
    }

    @Override
    default void close() {
    }

    /** Whether a poison record fails the run (rather than being skipped or kept aside). */
    default boolean failsTheRun() {
        return false;
    }

    /** Fail the run at the first poison record (the default). */
    static Rejects fail() {
        return new Rejects() {
            @Override
            public void reject(SourceRecord record, RuntimeException error) {
                throw error;
            }

            @Override
            public boolean failsTheRun() {
                return true;
            }
        };
    }

    /** Skip poison records; they are counted as rejected. */
    static Rejects skip() {
        return (record, error) -> { };
    }

    /** Append poison records to a JSON-lines file, raw bytes base64, with coordinates and the error. */
    static Rejects toFile(Path file) {
        return new FileDeadLetters(file);
    }

    /**
     * Produce poison records, raw, to a topic, with headers naming the source and the error. The topic must exist:
     * kbackfill never creates it, and a producer to a missing topic on a broker without auto-creation would block
     * and retry instead of failing, so it is looked up first.
     *
     * @throws dev.kbackfill.core.sink.SinkConfigException when the cluster says the topic does not exist
     */
    static Rejects toTopic(Map<String, Object> clientConfig, String topic) {
        checkExists(clientConfig, topic);
        return new TopicDeadLetters(clientConfig, topic);
    }

    private static void checkExists(Map<String, Object> clientConfig, String topic) {
        Map<String, Object> config = ClientConfigs.only(clientConfig, org.apache.kafka.clients.admin.AdminClientConfig.configNames());
        long timeoutMs = Long.parseLong(String.valueOf(config.getOrDefault(
                org.apache.kafka.clients.admin.AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000)));
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(config)) {
            admin.describeTopics(java.util.List.of(topic)).allTopicNames().get(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
                throw new dev.kbackfill.core.sink.SinkConfigException("invalid --dead-letter 'topic:" + topic
                        + "': the topic does not exist on the cluster at " + config.get("bootstrap.servers")
                        + "; create it first (kbackfill never creates it), or pass --dead-letter FILE");
            }
            // another failure (authorisation, the cluster unreachable): the run meets it where it applies
        } catch (java.util.concurrent.TimeoutException e) {
            // unreachable now: the run fails or retries on its own first contact
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The records a destination has written, by their coordinates: a run that fails and is retried in the same
     * process reads the records of its uncommitted batches again (the one that failed, and the one being filled
     * meanwhile, whose poison records were handed over already), and each is dead-lettered once. Across processes (a
     * crash, then a rerun) a dead letter may come twice, never not at all.
     */
    final class Written {
        private final Map<String, java.util.Set<Long>> offsets = new java.util.HashMap<>();

        boolean contains(SourceRecord r) {
            java.util.Set<Long> p = offsets.get(r.topic() + "/" + r.partition());
            return p != null && p.contains(r.offset());
        }

        void add(String topic, int partition, long offset) {
            offsets.computeIfAbsent(topic + "/" + partition, k -> new java.util.HashSet<>()).add(offset);
        }
    }

    /** The dead-letter file, created (or opened for appending) at the first dead letter: a run without one leaves none. */
    final class FileDeadLetters implements Rejects {
        private static final ObjectMapper JSON = new ObjectMapper();
        private final Path file;
        private final Written written = new Written();
        private FileChannel channel;
        private boolean dirty;

        FileDeadLetters(Path file) {
            this.file = file;
        }

        private FileChannel channel() {
            if (channel == null) {
                try {
                    channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                            StandardOpenOption.APPEND);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot open the dead-letter file " + file, e);
                }
            }
            return channel;
        }

        @Override
        public void reject(SourceRecord r, RuntimeException error) {
            if (written.contains(r)) {
                return;
            }
            ObjectNode line = JSON.createObjectNode();
            line.put("topic", r.topic());
            line.put("partition", r.partition());
            line.put("offset", r.offset());
            line.put("timestamp", r.timestamp());
            line.put("key", r.key() == null ? null : Base64.getEncoder().encodeToString(r.key()));
            line.put("value", r.value() == null ? null : Base64.getEncoder().encodeToString(r.value()));
            ArrayNode headers = line.putArray("headers");
            for (Header h : r.headers()) {
                headers.addObject().put("key", h.key())
                        .put("value", h.value() == null ? null : Base64.getEncoder().encodeToString(h.value()));
            }
            line.put("error", error.getMessage());
            try {
                channel().write(java.nio.ByteBuffer.wrap((JSON.writeValueAsString(line) + "\n")
                        .getBytes(StandardCharsets.UTF_8)));
                dirty = true;
                written.add(r.topic(), r.partition(), r.offset());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write to the dead-letter file " + file, e);
            }
        }

        @Override
        public void flush() {
            if (dirty) {
                try {
                    channel.force(true);
                    dirty = false;
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot sync the dead-letter file " + file, e);
                }
            }
        }

        @Override
        public String destination() {
            return file.toAbsolutePath().toString();
        }

        @Override
        public void close() {
            try {
                flush();
                if (channel != null) {
                    channel.close();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** A dead letter could not be written: the progress that would pass it is not committed. */
    final class DeadLetterException extends RuntimeException {
        public DeadLetterException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The dead-letter topic: every send is awaited by {@link #flush()}, and a failed one fails it. */
    final class TopicDeadLetters implements Rejects {
        private final String topic;
        private final org.apache.kafka.clients.producer.Producer<byte[], byte[]> producer;
        private final java.util.List<java.util.Map.Entry<SourceRecord, java.util.concurrent.Future<?>>> sent =
                new java.util.ArrayList<>();
        private final Written written = new Written();

        TopicDeadLetters(Map<String, Object> clientConfig, String topic) {
            this(topic, new KafkaProducer<>(producerConfig(clientConfig), new ByteArraySerializer(),
                    new ByteArraySerializer()));
        }

        /** Over any producer: the seam unit tests use. */
        TopicDeadLetters(String topic, org.apache.kafka.clients.producer.Producer<byte[], byte[]> producer) {
            this.topic = topic;
            this.producer = producer;
        }

        private static Map<String, Object> producerConfig(Map<String, Object> clientConfig) {
            Map<String, Object> config = ClientConfigs.only(clientConfig, ProducerConfig.configNames());
            config.put(ProducerConfig.ACKS_CONFIG, "all");
            config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            config.put(ProducerConfig.CLIENT_ID_CONFIG, "kbackfill-dead-letters");
            return config;
        }

        @Override
        public void reject(SourceRecord r, RuntimeException error) {
            if (written.contains(r)) {
                return;
            }
            ProducerRecord<byte[], byte[]> out = new ProducerRecord<>(topic, null, r.timestamp(), r.key(), r.value());
            r.headers().forEach(h -> out.headers().add(h));
            out.headers().add("kbackfill.error", String.valueOf(error.getMessage()).getBytes(StandardCharsets.UTF_8));
            out.headers().add("kbackfill.source.topic", r.topic().getBytes(StandardCharsets.UTF_8));
            out.headers().add("kbackfill.source.partition", Integer.toString(r.partition()).getBytes(StandardCharsets.UTF_8));
            out.headers().add("kbackfill.source.offset", Long.toString(r.offset()).getBytes(StandardCharsets.UTF_8));
            sent.add(Map.entry(r, producer.send(out)));
            written.add(r.topic(), r.partition(), r.offset()); // a send that fails fails the flush, and the run
        }

        @Override
        public void flush() {
            if (sent.isEmpty()) {
                return;
            }
            producer.flush(); // sends everything buffered; each send's outcome is on its future
            try {
                for (Map.Entry<SourceRecord, java.util.concurrent.Future<?>> s : sent) {
                    SourceRecord r = s.getKey();
                    try {
                        s.getValue().get();
                    } catch (java.util.concurrent.ExecutionException e) {
                        throw new DeadLetterException("the dead letter of " + r.coordinates() + " could not be written "
                                + "to topic " + topic + ": " + e.getCause().getMessage(), e.getCause());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new DeadLetterException("interrupted waiting for the dead letter of " + r.coordinates(), e);
                    }
                }
            } finally {
                sent.clear();
            }
        }

        @Override
        public String destination() {
            return "topic " + topic;
        }

        @Override
        public void close() {
            try {
                flush();
            } finally {
                producer.close();
            }
        }
    }
}
