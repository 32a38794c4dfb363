package dev.kbackfill.core.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.kbackfill.core.record.SourceRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class ReadAheadTest {

    /** A source of {@code polls} polls of one record each, on whatever thread reads it; records that thread. */
    private static final class Counting implements RecordSource {
        final int polls;
        final AtomicInteger handedOver = new AtomicInteger();
        final AtomicBoolean stopped = new AtomicBoolean();
        final AtomicBoolean closed = new AtomicBoolean();
        volatile Thread readBy;
        RuntimeException failAt;
        int failAfter = -1;

        Counting(int polls) {
            this.polls = polls;
        }

        @Override
        public void read(BoundedReader.Handler handler) throws InterruptedException {
            readBy = Thread.currentThread();
            for (int i = 0; i < polls && !stopped.get(); i++) {
                if (i == failAfter) {
                    throw failAt;
                }
                handler.accept(List.of(new SourceRecord("t", 0, i, 0, null, null, new RecordHeaders())),
                        Map.of(0, i + 1L), Map.of());
                handedOver.incrementAndGet();
            }
        }

        @Override
        public void stop() {
            stopped.set(true);
        }

        @Override
        public void close() {
            closed.set(true);
        }
    }

    @Test
    void everyPollReachesTheHandlerInOrderOnTheCallersThreadWhileTheSourceIsPolledOnAnother() throws Exception {
        Counting source = new Counting(1000);
        List<Long> offsets = new ArrayList<>();
        List<Long> positions = new ArrayList<>();
        Thread caller = Thread.currentThread();
        AtomicBoolean elsewhere = new AtomicBoolean();
        try (ReadAhead reader = new ReadAhead(source, 2)) {
            reader.read((records, at, lost) -> {
                elsewhere.compareAndSet(false, Thread.currentThread() != caller);
                records.forEach(r -> offsets.add(r.offset()));
                positions.add(at.get(0));
            });
        }
        assertThat(elsewhere).isFalse();
        assertThat(source.readBy).isNotSameAs(caller);
        assertThat(offsets).hasSize(1000).isSorted().doesNotHaveDuplicates();
        assertThat(positions.get(999)).isEqualTo(1000L);
        assertThat(source.closed).isTrue();
    }

    @Test
    void theSourceRunsAtMostDepthPollsAheadOfASlowHandler() throws Exception {
        Counting source = new Counting(50);
        AtomicInteger handled = new AtomicInteger();
        AtomicInteger mostAhead = new AtomicInteger();
        new ReadAhead(source, 3).read((records, at, lost) -> {
            Thread.sleep(2);
            // polled = handed over by the source; one more may be in the source's hands, blocked on the queue
            mostAhead.accumulateAndGet(source.handedOver.get() - handled.incrementAndGet(), Math::max);
        });
        assertThat(handled).hasValue(50);
        assertThat(mostAhead.get()).isBetween(1, 3);
    }

    @Test
    void whatTheSourceThrowsIsThrownToTheCallerAfterThePollsBeforeIt() {
        Counting source = new Counting(10);
        source.failAfter = 4;
        source.failAt = new ReadException("records were deleted", null);
        List<Long> offsets = new ArrayList<>();
        assertThatThrownBy(() -> new ReadAhead(source, 2).read((records, at, lost) ->
                records.forEach(r -> offsets.add(r.offset()))))
                .isSameAs(source.failAt);
        assertThat(offsets).containsExactly(0L, 1L, 2L, 3L);
    }

    @Test
    void aHandlerThatFailsStopsTheSourceAndReadReturnsOnlyAfterItsThreadEnded() throws Exception {
        Counting source = new Counting(Integer.MAX_VALUE);
        IllegalStateException boom = new IllegalStateException("the sink is gone");
        assertThatThrownBy(() -> new ReadAhead(source, 2).read((records, at, lost) -> {
            if (records.get(0).offset() == 3) {
                throw boom;
            }
        })).isSameAs(boom);
        assertThat(source.stopped).isTrue();
        assertThat(source.readBy.isAlive()).isFalse(); // the consumer is free to be closed by the caller
    }

    @Test
    void stopMakesAReadInProgressReturnSoon() throws Exception {
        Counting source = new Counting(Integer.MAX_VALUE);
        ReadAhead reader = new ReadAhead(source, 2);
        CountDownLatch reading = new CountDownLatch(1);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                reader.read((records, at, lost) -> reading.countDown());
            } catch (Throwable e) {
                failed.set(e);
            }
        });
        t.start();
        assertThat(reading.await(10, TimeUnit.SECONDS)).isTrue();
        reader.stop();
        t.join(10_000);
        assertThat(t.isAlive()).isFalse();
        assertThat(failed.get()).isNull();
        assertThat(source.stopped).isTrue();
        assertThat(source.readBy.isAlive()).isFalse();
    }
}
