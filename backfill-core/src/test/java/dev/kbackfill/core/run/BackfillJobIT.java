package dev.kbackfill.core.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.JobSpec;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.KafkaOffsetSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The job protocol as a library caller uses it: resume semantics and retries of transient failures. */
@Tag("kafka")
class BackfillJobIT {

    private static EmbeddedKafka kafka;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    /** A sink that keeps rows and job state in memory, as a database would; fails as told. */
    private static final class MemorySink implements Sink, JobStore {
        final Map<String, Object> rows = new HashMap<>();
        JobState state;
        int opens;
        long failAtBatch = -1;
        RuntimeException failure;

        @Override
        public void openForJobs() {
            open();
        }

        @Override
        public String store() {
            return target();
        }

        /** This sink keeps its jobs' state itself, beside its data. */
        @Override
        public JobStore jobStore() {
            return this;
        }

        @Override
        public String target() {
            return "memory:";
        }

        @Override
        public String destination() {
            return "memory";
        }

        @Override
        public void open() {
            opens++;
        }

        @Override
        public AutoCloseable lock(String job) {
            return () -> { };
        }

        @Override
        public Optional<JobState> load(String job) {
            return Optional.ofNullable(state);
        }

        @Override
        public void begin(JobState s) {
            state = s;
        }

        @Override
        public WriteResult write(WriteBatch batch) {
            if (batch.sequence() == failAtBatch && failure != null) {
                RuntimeException f = failure;
                failure = null; // once
                throw f;
            }
            for (Change c : batch.changes()) {
                rows.put((String) c.key().get("kafka_key"), c.values().get("n"));
            }
            state = state.advancedTo(batch.nextOffsets());
            return new WriteResult(batch.changes().size(), 0, 0);
        }

        @Override
        public boolean reset(String job) {
            state = null;
            return true;
        }

        @Override
        public void close() {
        }
    }

    private static void load(String topic, int records) throws Exception {
        kafka.createTopic(topic, 1, Map.of());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(kafka.clientConfig(), new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < records; i++) {
                p.send(new ProducerRecord<>(topic, 0, "k" + i, "{\"n\":" + i + "}"));
            }
            p.flush();
        }
    }

    private static BackfillJob.Outcome run(String topic, MemorySink sink, Duration retryFor, List<String> events) {
        return run(topic, sink, retryFor, events, RunOptions.DEFAULTS);
    }

    private static BackfillJob.Outcome run(String topic, MemorySink sink, Duration retryFor, List<String> events,
                                           RunOptions options) {
        return run(topic, sink, retryFor, events, options, Rejects.fail());
    }

    private static BackfillJob.Outcome run(String topic, MemorySink sink, Duration retryFor, List<String> events,
                                           RunOptions options, Rejects rejects) {
        BackfillRequest request = BackfillRequest.builder(topic).from("earliest").to("latest").build();
        RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
        BackfillJob.Settings settings = new BackfillJob.Settings(Optional.of("job"), request, Optional.empty(),
                d -> JobSpec.of(request, d, "string", "json", List.of(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE,
                        false), kafka.clientConfig(), decoder, rejects, TombstoneMode.DELETE, options,
                OptionalInt.of(50), retryFor);
        BackfillJob.Events recorder = new BackfillJob.Events() {
            @Override
            public void retrying(int attempt, Duration delay, RuntimeException cause) {
                events.add("retry " + attempt + ": " + cause.getMessage());
            }

            @Override
            public void starting(JobDecision decision, JobState state) {
                events.add(decision.getClass().getSimpleName());
            }
        };
        KafkaOffsetSource source = KafkaOffsetSource.create(kafka.clientConfig());
        try {
            return new BackfillJob(sink, settings, recorder, RunListener.NONE)
                    .run(() -> BackfillJob.Cluster.of(source, topic));
        } finally {
            source.close();
        }
    }

    /**
     * The local run looks offsets up (the log time below each partition's start) in the job's own offset source, the
     * cluster side the protocol was given, instead of opening a client of its own.
     */
    @Test
    void theRunLooksOffsetsUpInTheJobsOwnOffsetSource() throws Exception {
        load("job-own-source", 40);
        BackfillRequest request = BackfillRequest.builder("job-own-source").from("earliest").to("latest").build();
        RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
        BackfillJob.Settings settings = new BackfillJob.Settings(Optional.of("own"), request, Optional.empty(),
                d -> JobSpec.of(request, d, "string", "json", List.of(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE,
                        false), kafka.clientConfig(), decoder, Rejects.fail(), TombstoneMode.DELETE,
                RunOptions.DEFAULTS, OptionalInt.of(50), Duration.ZERO);
        java.util.concurrent.atomic.AtomicInteger lookups = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger atStart = new java.util.concurrent.atomic.AtomicInteger(-1);
        MemorySink sink = new MemorySink();
        try (KafkaOffsetSource real = KafkaOffsetSource.create(kafka.clientConfig())) {
            dev.kbackfill.resolver.OffsetSource counting = (dev.kbackfill.resolver.OffsetSource)
                    java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                            new Class<?>[] {dev.kbackfill.resolver.OffsetSource.class}, (proxy, method, args) -> {
                                if (method.getName().equals("logStartOffsets")) {
                                    lookups.incrementAndGet();
                                }
                                try {
                                    return method.invoke(real, args);
                                } catch (java.lang.reflect.InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            });
            BackfillJob.Events events = new BackfillJob.Events() {
                @Override
                public void starting(JobDecision decision, JobState state) {
                    atStart.set(lookups.get());
                }
            };
            BackfillJob.Outcome outcome = new BackfillJob(sink, settings, events, RunListener.NONE)
                    .run(() -> BackfillJob.Cluster.of(counting, "job-own-source"));
            assertThat(outcome).isInstanceOf(BackfillJob.Outcome.Completed.class);
        }
        assertThat(sink.rows).hasSize(40);
        assertThat(lookups.get()).as("log starts asked of the job's source by the run itself, after the protocol's")
                .isGreaterThan(atStart.get());
    }

    @Test
    void aTransientFailureIsRetriedFromTheSinksProgressAndTheRunCompletes() throws Exception {
        load("job-transient", 300);
        MemorySink sink = new MemorySink();
        sink.failAtBatch = 3;
        sink.failure = new SinkException("writing batch 3 failed: connection lost",
                new SQLTransientConnectionException("connection reset", "08006"));
        List<String> events = new ArrayList<>();
        BackfillJob.Outcome outcome = run("job-transient", sink, Duration.ofSeconds(30), events);
        assertThat(outcome).isInstanceOf(BackfillJob.Outcome.Completed.class);
        assertThat(events).hasSize(3);
        assertThat(events.get(0)).isEqualTo("Start");
        assertThat(events.get(1)).startsWith("retry 1: writing batch 3 failed: connection lost");
        assertThat(events.get(2)).isEqualTo("Resume");
        assertThat(sink.opens).isEqualTo(2);
        assertThat(sink.rows).hasSize(300);
        assertThat(sink.state.complete()).isTrue();
        RunSummary summary = ((BackfillJob.Outcome.Completed) outcome).summary();
        assertThat(summary.read()).as("each record read once per attempt that had not committed it").isBetween(300L, 400L);
        assertThat(summary.partitions().get(0).next()).isEqualTo(300);
    }

    /**
     * A poison record is dead-lettered once, though a transient failure makes the run read it again: the batch being
     * filled while the failed one was written had handed its poison records over already, and the failed batch its
     * own before its write.
     */
    @Test
    void aRecordIsDeadLetteredOnceThoughARetryReadsItAgain(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        String topic = "job-dead-letters";
        kafka.createTopic(topic, 1, Map.of());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(kafka.clientConfig(), new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < 300; i++) {
                p.send(new ProducerRecord<>(topic, 0, "k" + i, i % 7 == 3 ? "not json " + i : "{\"n\":" + i + "}"));
            }
            p.flush();
        }
        MemorySink sink = new MemorySink();
        sink.failAtBatch = 3;
        sink.failure = new SinkException("writing batch 3 failed: connection lost",
                new SQLTransientConnectionException("connection reset", "08006"));
        java.nio.file.Path file = dir.resolve("dead.jsonl");
        RunSummary summary;
        try (Rejects rejects = Rejects.toFile(file)) {
            BackfillJob.Outcome outcome = run(topic, sink, Duration.ofSeconds(30), new ArrayList<>(), RunOptions.DEFAULTS,
                    rejects);
            assertThat(outcome).isInstanceOf(BackfillJob.Outcome.Completed.class);
            summary = ((BackfillJob.Outcome.Completed) outcome).summary();
        }
        List<Long> offsets = new ArrayList<>();
        for (String line : java.nio.file.Files.readAllLines(file)) {
            offsets.add(new com.fasterxml.jackson.databind.ObjectMapper().readTree(line).path("offset").asLong());
        }
        List<Long> poison = new ArrayList<>();
        for (long i = 3; i < 300; i += 7) {
            poison.add(i);
        }
        assertThat(offsets).containsExactlyInAnyOrderElementsOf(poison);
        assertThat(summary.read()).as("reads count once per attempt").isGreaterThan(300);
        assertThat(summary.partitions().get(0).rejected())
                .as("records count once, as the dead-letter file holds them, though the retry read some again")
                .isEqualTo(poison.size());
        assertThat(summary.partitions().get(0).written() + summary.partitions().get(0).rejected()
                + summary.partitions().get(0).superseded() + summary.partitions().get(0).filtered()).isEqualTo(300);
    }

    @Test
    void aRetryAfterATransientFailureDoesNotGiveTheRunItsRecordLimitAfresh() throws Exception {
        load("job-limited", 300);
        MemorySink sink = new MemorySink();
        sink.failAtBatch = 2;
        sink.failure = new SinkException("writing batch 2 failed: connection lost",
                new SQLTransientConnectionException("connection reset", "08006"));
        List<String> events = new ArrayList<>();
        BackfillJob.Outcome outcome = run("job-limited", sink, Duration.ofSeconds(30), events,
                RunOptions.DEFAULTS.withLimits(new RunLimits(120, Duration.ZERO, 0, 0)));
        assertThat(outcome).isInstanceOf(BackfillJob.Outcome.Completed.class);
        assertThat(events).anyMatch(e -> e.startsWith("retry 1"));
        // batches of 50: the first attempt committed one and read a second; the retry may add one batch, not 120
        assertThat(sink.state.nextOffsets().get(0)).isBetween(50L, 120L);
    }

    @Test
    void aFailureThatIsNotTransientFailsAtOnce() throws Exception {
        load("job-permanent", 120);
        MemorySink sink = new MemorySink();
        sink.failAtBatch = 2;
        sink.failure = new SinkException("type mismatch in column amount", null);
        List<String> events = new ArrayList<>();
        assertThatThrownBy(() -> run("job-permanent", sink, Duration.ofSeconds(30), events))
                .isInstanceOf(RunFailure.class).hasMessageStartingWith("type mismatch in column amount");
        assertThat(events).containsExactly("Start");
    }

    @Test
    void aFinishedFixedJobHasNothingToDoAndAnotherSpecIsAConflict() throws Exception {
        load("job-done", 10);
        MemorySink sink = new MemorySink();
        assertThat(run("job-done", sink, Duration.ZERO, new ArrayList<>())).isInstanceOf(BackfillJob.Outcome.Completed.class);
        // "latest" moves, so a rerun is the job's next run; a fixed request would have nothing to do
        assertThat(run("job-done", sink, Duration.ZERO, new ArrayList<>())).isInstanceOf(BackfillJob.Outcome.Completed.class);
        assertThat(sink.state.run()).isEqualTo(2);
        sink.state = new JobState("job", "other", 2, sink.state.plan(), sink.state.nextOffsets(),
                new JobSpec(Map.of(JobSpec.DESTINATION, "elsewhere")));
        assertThatThrownBy(() -> run("job-done", sink, Duration.ZERO, new ArrayList<>()))
                .isInstanceOf(JobConflictException.class).hasMessageContaining("destination elsewhere, not memory");
    }
}
