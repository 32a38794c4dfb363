package dev.kbackfill.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.SinkException;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/** What may follow a failed transaction, against Kafka's MockProducer. */
class TransactionsTest {

    /** A producer whose commits time out a given number of times, then succeed. */
    private static final class SlowCommits extends MockProducer<byte[], byte[]> {
        int timeouts;

        SlowCommits(int timeouts) {
            super(true, null, new ByteArraySerializer(), new ByteArraySerializer());
            this.timeouts = timeouts;
            initTransactions();
        }

        @Override
        public void commitTransaction() {
            if (timeouts-- > 0) {
                throw new TimeoutException("Timeout expired after 60000ms while awaiting EndTxn(COMMIT)");
            }
            super.commitTransaction();
        }
    }

    private static Runnable send(MockProducer<byte[], byte[]> p) {
        return () -> p.send(new ProducerRecord<>("t", new byte[] {1}, new byte[] {2}));
    }

    @Test
    void aCommitThatTimesOutIsRetriedNotAborted() {
        SlowCommits p = new SlowCommits(Transactions.COMMIT_ATTEMPTS - 1);
        Transactions.run(p, "job", "t", send(p), () -> false);
        assertThat(p.transactionCommitted()).isTrue();
        assertThat(p.transactionAborted()).isFalse();
    }

    @Test
    void aCommitWhoseOutcomeStaysUnknownIsNeverAbortedAndSaysSo() {
        SlowCommits p = new SlowCommits(Integer.MAX_VALUE);
        assertThatThrownBy(() -> Transactions.run(p, "job", "t", send(p), () -> false))
                .isInstanceOf(Transactions.CommitOutcomeUnknownException.class)
                .hasMessageContaining("its outcome is unknown, so it was not aborted")
                .hasCauseInstanceOf(TimeoutException.class);
        assertThat(p.transactionAborted()).isFalse();
    }

    @Test
    void aFailureBeforeTheCommitAbortsAndAFencedProducerStops() {
        MockProducer<byte[], byte[]> p = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        p.initTransactions();
        assertThatThrownBy(() -> Transactions.run(p, "job", "t", () -> {
            throw new org.apache.kafka.common.KafkaException("record too large");
        }, () -> false)).isInstanceOf(SinkException.class).hasMessageContaining("the transaction was aborted");
        assertThat(p.transactionAborted()).isTrue();

        MockProducer<byte[], byte[]> fenced = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        fenced.initTransactions();
        fenced.commitTransactionException = new ProducerFencedException("a newer epoch");
        assertThatThrownBy(() -> Transactions.run(fenced, "job", "t", send(fenced), () -> false))
                .isInstanceOf(JobConflictException.class).hasMessageContaining("taken over by a newer run");
    }

    /**
     * Kafka 4.4's coordinator can answer the EndTxn of a producer it is fencing with UNKNOWN_SERVER_ERROR (an
     * IllegalStateException: a transition to ONGOING while an epoch fence is pending). The error says nothing of the
     * fence: the job's records decide. Another run committed since: a job conflict. None did: the failure as it came,
     * and the transaction aborted.
     */
    @Test
    void anUnexplainedCommitFailureIsAJobConflictOnlyWhereAnotherRunCommittedSince() {
        for (boolean another : new boolean[] {true, false}) {
            MockProducer<byte[], byte[]> p = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
            p.initTransactions();
            p.commitTransactionException = new org.apache.kafka.common.KafkaException(
                    "Unhandled error in EndTxnResponse: The server experienced an unexpected error when processing the request.");
            int[] asked = {0};
            var thrown = assertThatThrownBy(() -> Transactions.run(p, "job", "t", send(p), () -> {
                asked[0]++;
                return another;
            }));
            if (another) {
                thrown.isInstanceOf(JobConflictException.class).hasMessageContaining("taken over by a newer run")
                        .hasMessageContaining("another run committed the job's state after this one's last commit")
                        .hasMessageContaining("unexpected error");
            } else {
                thrown.isExactlyInstanceOf(SinkException.class).hasMessageContaining("the transaction was aborted");
            }
            assertThat(asked[0]).isEqualTo(1);
        }
        MockProducer<byte[], byte[]> fenced = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        fenced.initTransactions();
        fenced.commitTransactionException = new ProducerFencedException("a newer epoch");
        assertThatThrownBy(() -> Transactions.run(fenced, "job", "t", send(fenced), () -> {
            throw new AssertionError("a fenced producer needs no question");
        })).isInstanceOf(JobConflictException.class);
        // an error that says what went wrong is reported at once, without looking for another run
        MockProducer<byte[], byte[]> tooLarge = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        tooLarge.initTransactions();
        tooLarge.commitTransactionException = new org.apache.kafka.common.KafkaException("the batch failed",
                new org.apache.kafka.common.errors.RecordTooLargeException("a record of 2 MB"));
        assertThatThrownBy(() -> Transactions.run(tooLarge, "job", "t", send(tooLarge), () -> {
            throw new AssertionError("a stated cause needs no question");
        })).isExactlyInstanceOf(SinkException.class).hasMessageContaining("the transaction was aborted")
                .hasRootCauseInstanceOf(org.apache.kafka.common.errors.RecordTooLargeException.class);
    }
}
