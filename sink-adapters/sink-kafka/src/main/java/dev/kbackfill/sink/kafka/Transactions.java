package dev.kbackfill.sink.kafka;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;

import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.SinkException;

/**
 * One transaction of a job's producer, with Kafka's rules for what may follow a failure:
 * <ul>
 *   <li>fenced (a newer run of the job took over): stop, nothing more to do with this producer;</li>
 *   <li>a failure before the commit: abort; nothing of the transaction is visible. Where the error does not say
 *       why, the job's own records are asked whether another run committed since this one did: a broker can answer
 *       a producer it is fencing with an unexpected error (Kafka 4.4's coordinator fails an EndTxn that meets a
 *       pending epoch fence with UNKNOWN_SERVER_ERROR), and that run is then a job conflict as well;</li>
 *   <li>a commit that times out (or is interrupted) has an <em>unknown</em> outcome: the commit request may have
 *       reached the coordinator. It may be retried, and is, a few times; it must not be aborted. If it still times
 *       out the producer is closed, never aborted, and a {@link CommitOutcomeUnknownException} says so: the next run
 *       reads the job's state from the same transaction's record and continues exactly once, whichever way it went.</li>
 * </ul>
 */
final class Transactions {

    static final int COMMIT_ATTEMPTS = 3;

    private Transactions() {
    }

    /** The commit's outcome is not known: the producer must be closed, not used again. */
    static final class CommitOutcomeUnknownException extends SinkException {
        CommitOutcomeUnknownException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Whether another run of the job committed its state since this one last did (it took the job over). */
    @FunctionalInterface
    interface TakeOver {
        boolean happened();
    }

    static void run(Producer<byte[], byte[]> producer, String job, String topic, Runnable body, TakeOver takeOver) {
        try {
            producer.beginTransaction();
            body.run();
        } catch (KafkaException e) {
            throw failedBeforeCommit(producer, job, topic, e, takeOver);
        } catch (RuntimeException e) {
            // the body refused the transaction itself (the log superseded some of its records): nothing is committed
            try {
                producer.abortTransaction();
            } catch (KafkaException ignored) {
                // the body's own failure is what matters
            }
            throw e;
        }
        for (int attempt = 1; ; attempt++) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException | InterruptException e) {
                if (attempt >= COMMIT_ATTEMPTS) {
                    throw new CommitOutcomeUnknownException("committing a transaction of job " + job + " to topic "
                            + topic + " timed out " + attempt + " times (" + e.getMessage() + "): its outcome is unknown, "
                            + "so it was not aborted; a rerun reads the committed progress and continues exactly once", e);
                }
            } catch (KafkaException e) {
                throw failedBeforeCommit(producer, job, topic, e, takeOver);
            }
        }
    }

    private static RuntimeException failedBeforeCommit(Producer<byte[], byte[]> producer, String job, String topic,
                                                       KafkaException e, TakeOver takeOver) {
        if (fenced(e)) {
            return takenOver(job, "its producer was fenced");
        }
        try {
            producer.abortTransaction();
        } catch (KafkaException ignored) {
            // the abort's failure says nothing more than the original one
        }
        if (unexplained(e) && takeOver.happened()) {
            return takenOver(job, "another run committed the job's state after this one's last commit; the broker "
                    + "answered this one's transaction: " + e.getMessage());
        }
        return new SinkException("writing to topic " + topic + " failed: " + e.getMessage()
                + "; the transaction was aborted, nothing of it is visible", e);
    }

    private static JobConflictException takenOver(String job, String how) {
        return new JobConflictException("job '" + job + "' was taken over by a newer run of it (" + how + "); this run "
                + "stops, the newer one continues from the committed progress");
    }

    /**
     * An error that names no cause: at its root a broker's unknown server error, or Kafka's plain
     * {@link KafkaException} ("Unhandled error in EndTxnResponse: The server experienced an unexpected error ..."),
     * not one of its subclasses that say what went wrong (a record too large, a timeout, an authorization).
     */
    static boolean unexplained(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root instanceof org.apache.kafka.common.errors.UnknownServerException || root.getClass() == KafkaException.class;
    }

    /**
     * A newer producer with the job's transactional.id took over: fenced, or its epoch superseded, or (when the
     * takeover aborted the open transaction under the coordinator's feet) the transaction found in a state it
     * cannot be in. Kafka 4.4 answers a fenced producer with any of the three, depending on which request of the
     * transaction meets the new epoch first.
     */
    static boolean fenced(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ProducerFencedException || t instanceof InvalidProducerEpochException
                    || t instanceof InvalidTxnStateException) {
                return true;
            }
        }
        return false;
    }
}
