package dev.kbackfill.core.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;

import dev.kbackfill.core.record.SourceRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

class RejectsTest {

    private static SourceRecord record(long offset) {
        return new SourceRecord("orders", 2, offset, 1000L, "k".getBytes(StandardCharsets.UTF_8),
                "bad".getBytes(StandardCharsets.UTF_8), new RecordHeaders());
    }

    private static MockProducer<byte[], byte[]> producer() {
        return new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
    }

    @Test
    void aDeadLetterTopicFlushWaitsForEverySendAndFailsWhenOneFailed() {
        MockProducer<byte[], byte[]> producer = producer();
        Rejects.TopicDeadLetters letters = new Rejects.TopicDeadLetters("dlq", producer);
        letters.reject(record(7), new IllegalStateException("cannot decode"));
        letters.reject(record(8), new IllegalStateException("cannot decode"));
        producer.completeNext();
        producer.errorNext(new org.apache.kafka.common.errors.TimeoutException("broker gone"));
        assertThatThrownBy(letters::flush)
                .isInstanceOf(Rejects.DeadLetterException.class)
                .hasMessage("the dead letter of orders/2@8 could not be written to topic dlq: broker gone");
    }

    @Test
    void aDeadLetterCarriesItsSourceCoordinatesAndTheError() {
        MockProducer<byte[], byte[]> producer = producer();
        Rejects.TopicDeadLetters letters = new Rejects.TopicDeadLetters("dlq", producer);
        letters.reject(record(7), new IllegalStateException("orders/2@7: not JSON"));
        producer.completeNext();
        letters.flush();
        var sent = producer.history().get(0);
        assertThat(new String(sent.headers().lastHeader("kbackfill.source.offset").value(), StandardCharsets.UTF_8))
                .isEqualTo("7");
        assertThat(new String(sent.headers().lastHeader("kbackfill.error").value(), StandardCharsets.UTF_8))
                .isEqualTo("orders/2@7: not JSON");
        letters.flush(); // nothing pending: returns at once
    }
}
