package dev.kbackfill.core.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.KafkaOffsetSource;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RangeResolver;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * How a run cuts the records of a real topic into batches: reduced as they arrive, a batch holds one change per
 * key, so it ends on distinct keys, or on the record limit for topics with few keys. The sink is an in-memory
 * recorder (the seam under test is the run loop, not a database).
 */
@Tag("kafka")
class BackfillRunBatchingIT {

    private static EmbeddedKafka kafka;

    @BeforeAll
    static void broker() {
        kafka = SharedKafka.get();
    }

    /** Keeps every batch it is given, and the job state as a real sink would; fails on request. */
    private static class RecordingSink implements Sink, JobStore {
        final List<WriteBatch> batches = new ArrayList<>();
        final Map<String, Change> rows = new HashMap<>();
        final java.util.concurrent.atomic.AtomicInteger writing = new java.util.concurrent.atomic.AtomicInteger();
        long failAt = Long.MAX_VALUE;

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
        }

        @Override
        public AutoCloseable lock(String job) {
            return () -> { };
        }

        @Override
        public Optional<JobState> load(String job) {
            return Optional.empty();
        }

        @Override
        public void begin(JobState state) {
        }

        @Override
        public WriteResult write(WriteBatch batch) {
            assertThat(writing.incrementAndGet()).as("one write at a time").isEqualTo(1);
            try {
                Thread.sleep(20); // long enough for the next batch to fill meanwhile
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            writing.decrementAndGet();
            if (batch.sequence() == failAt) {
                throw new dev.kbackfill.core.sink.SinkException("disk full at batch " + batch.sequence(), null);
            }
            batches.add(batch);
            batch.changes().forEach(c -> rows.put((String) c.key().get("kafka_key"), c));
            return new WriteResult(batch.changes().size(), 0, 0);
        }

        @Override
        public boolean reset(String job) {
            return false;
        }

        @Override
        public void close() {
        }
    }

    /** {@code records} records over {@code keys} keys cycling, values {@code {"n": i}}, in one partition. */
    private static Plan load(String topic, int records, int keys) throws Exception {
        String[] keyValues = new String[records * 2];
        for (int i = 0; i < records; i++) {
            keyValues[2 * i] = "k" + (i % keys);
            keyValues[2 * i + 1] = "{\"n\":" + i + "}";
        }
        return loadValues(topic, keyValues);
    }

    private static RunSummary run(Plan plan, RecordingSink sink, int batchRows) {
        return run(plan, sink, batchRows, Rejects.fail());
    }

    private static RunSummary run(Plan plan, RecordingSink sink, int batchRows, Rejects rejects) {
        RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value", List.of());
        return new BackfillRun(kafka.clientConfig(), decoder, sink, TombstoneMode.DELETE,
                RunOptions.DEFAULTS.withBatchRows(batchRows), RunListener.NONE, rejects)
                .execute(JobState.begin("batching", "f", 1, plan));
    }

    @Test
    void aBatchEndsOnDistinctKeysNotOnRecords() throws Exception {
        // 600 records over 60 keys, ten updates each, keys cycling: batches of 100 rows would be 100 records before
        Plan plan = load("batching-keys", 600, 60);
        RecordingSink sink = new RecordingSink();
        RunSummary summary = run(plan, sink, 100);

        // the whole range reduces to 60 rows, under the 100-row batch and the 1,000-record limit: one batch
        assertThat(sink.batches).hasSize(1);
        assertThat(sink.batches.get(0).changes()).hasSize(60);
        assertThat(sink.batches.get(0).nextOffsets()).containsEntry(0, 600L);
        assertThat(sink.rows.get("k7").values()).containsEntry("n", 547L);
        assertThat(summary.read()).isEqualTo(600);
        assertThat(summary.written()).isEqualTo(60);
        assertThat(summary.superseded()).isEqualTo(540);
    }

    @Test
    void aTopicWithFewKeysStillCommitsEveryTenBatchesOfRecords() throws Exception {
        // 5 keys: a batch of 10 rows never fills, so the 100-record limit ends each batch
        Plan plan = load("batching-few-keys", 1000, 5);
        RecordingSink sink = new RecordingSink();
        RunSummary summary = run(plan, sink, 10);

        assertThat(sink.batches).hasSizeBetween(9, 11);
        long previous = 0;
        for (WriteBatch b : sink.batches) {
            assertThat(b.changes()).hasSizeLessThanOrEqualTo(5);
            long next = b.nextOffsets().get(0);
            // a poll hands over at most batch-size records, so a batch spans at most limit + one poll
            assertThat(next - previous).isBetween(1L, 110L);
            previous = next;
        }
        assertThat(previous).isEqualTo(1000);
        assertThat(summary.read()).isEqualTo(1000);
        assertThat(summary.written() + summary.superseded()).isEqualTo(1000);
        assertThat(sink.rows.get("k4").values()).containsEntry("n", 999L);
    }

    @Test
    void distinctKeysEndABatchAtTheBatchSizePlusAtMostOnePoll() throws Exception {
        Plan plan = load("batching-distinct", 500, 500);
        RecordingSink sink = new RecordingSink();
        RunSummary summary = run(plan, sink, 50);

        assertThat(sink.batches).hasSizeBetween(5, 10);
        assertThat(sink.batches).allSatisfy(b -> assertThat(b.changes()).hasSizeLessThan(100));
        assertThat(summary.written()).isEqualTo(500);
        assertThat(summary.superseded()).isZero();
    }

    @Test
    void aFailedWriteStopsTheRunAtTheLastCommittedBatch() throws Exception {
        Plan plan = load("batching-failure", 500, 500);
        RecordingSink sink = new RecordingSink();
        sink.failAt = 3;
        assertThatThrownBy(() -> run(plan, sink, 50))
                .isInstanceOf(RunFailure.class)
                .hasCauseInstanceOf(dev.kbackfill.core.sink.SinkException.class)
                .hasMessageStartingWith("disk full at batch 3; stopped with partition 0 at offset "
                        + sink.batches.get(1).nextOffsets().get(0) + " of [.., 500) committed");
        // the batch after the failed one was never written
        assertThat(sink.batches).hasSize(2);
    }

    private static Plan loadValues(String topic, String... keyValues) throws Exception {
        kafka.createTopic(topic, 1, Map.of());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(kafka.clientConfig(), new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < keyValues.length; i += 2) {
                p.send(new ProducerRecord<>(topic, 0, keyValues[i], keyValues[i + 1]));
            }
            p.flush();
        }
        try (KafkaOffsetSource source = KafkaOffsetSource.create(kafka.clientConfig())) {
            return new RangeResolver(source).resolve(BackfillRequest.builder(topic).from("earliest").to("latest").build());
        }
    }

    @Test
    void onlyTheRecordThatSurvivesForItsKeyIsDecoded() throws Exception {
        // a's first value is not JSON, but a later record of a supersedes it in the same batch
        Plan plan = loadValues("batching-lazy", "a", "{not json", "b", "{\"n\":1}", "a", "{\"n\":2}");
        RecordingSink sink = new RecordingSink();
        RunSummary summary = run(plan, sink, 100);
        assertThat(sink.rows.get("a").values()).containsEntry("n", 2L);
        assertThat(sink.rows.get("b").values()).containsEntry("n", 1L);
        assertThat(summary.superseded()).isEqualTo(1);
        assertThat(summary.rejected()).isZero();
        assertThat(sink.batches.get(0).changes()).allSatisfy(c -> assertThat(c.source()).isNull());
    }

    @Test
    void aSurvivingRecordThatCannotBeDecodedFailsTheRunAtItsBatch() throws Exception {
        Plan plan = loadValues("batching-poison", "a", "{\"n\":1}", "b", "{\"n\":2}", "a", "{oops");
        RecordingSink sink = new RecordingSink();
        assertThatThrownBy(() -> run(plan, sink, 100))
                .isInstanceOf(RunFailure.class)
                .hasMessage("cannot decode batching-poison/0@2: the value is not JSON: Unexpected character ('o' "
                        + "(code 111)): was expecting double-quote to start field name; stopped with partition 0 at "
                        + "offset 0 of [.., 3) committed; a rerun resumes there");
        assertThat(sink.batches).isEmpty();
    }

    @Test
    void theNextBatchIsDecodedWhileTheOneBeforeItIsBeingWritten() throws Exception {
        // one record a batch: a (valid) is batch 1, b (not JSON, decoded lazily) batch 2
        Plan plan = loadValues("batching-overlap", "a", "{\"n\":1}", "b", "{oops");
        java.util.concurrent.CountDownLatch decoded = new java.util.concurrent.CountDownLatch(1);
        boolean[] decodedDuringWrite = {false};
        RecordingSink sink = new RecordingSink() {
            @Override
            public WriteResult write(WriteBatch batch) {
                try {
                    // batch 2's poison record is met (and rejected) only by decoding it
                    decodedDuringWrite[0] = decoded.await(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.write(batch);
            }
        };
        Rejects failing = new Rejects() {
            @Override
            public void reject(dev.kbackfill.core.record.SourceRecord record, RuntimeException error) {
                decoded.countDown();
                throw error;
            }

            @Override
            public boolean failsTheRun() {
                return true;
            }
        };

        assertThatThrownBy(() -> run(plan, sink, 1, failing))
                .isInstanceOf(RunFailure.class)
                .hasMessageStartingWith("cannot decode batching-overlap/0@1: the value is not JSON")
                // batch 1 was written meanwhile, and committed before the run stopped
                .hasMessageContaining("stopped with partition 0 at offset 1 of [.., 2) committed");
        assertThat(decodedDuringWrite[0]).as("batch 2 decoded while batch 1 was being written").isTrue();
        assertThat(sink.batches).hasSize(1);
        assertThat(sink.rows.get("a").values()).containsEntry("n", 1L);
    }

    @Test
    void aFailedWriteOfTheBatchInFlightIsReportedBeforeTheNextBatchsUndecodableValue() throws Exception {
        Plan plan = loadValues("batching-overlap-failure", "a", "{\"n\":1}", "b", "{oops");
        RecordingSink sink = new RecordingSink() {
            @Override
            public WriteResult write(WriteBatch batch) {
                try {
                    Thread.sleep(500); // batch 2 is decoded (and fails) meanwhile
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.write(batch);
            }
        };
        sink.failAt = 1;

        assertThatThrownBy(() -> run(plan, sink, 1))
                .isInstanceOf(RunFailure.class)
                .hasMessageStartingWith("disk full at batch 1; stopped with partition 0 at offset 0 of [.., 2) committed");
        assertThat(sink.batches).isEmpty();
    }
}
