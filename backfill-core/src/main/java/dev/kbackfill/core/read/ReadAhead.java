package dev.kbackfill.core.read;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link RecordSource} that polls on a thread of its own while the caller's handler works on what was polled
 * before: decoding (the costliest step of reading) runs on another core than the consumer's fetching and parsing,
 * instead of after it on one thread. At most {@code depth} polls wait between the two; a handler that falls behind
 * holds the poller back, so memory stays bounded.
 *
 * <p>The handler still runs on the thread that called {@link #read}, poll by poll in order, and what the source
 * throws is thrown there: to its caller this is the same source, only faster. The source's consumer is used by the
 * polling thread alone, and {@link #read} returns only after that thread has ended, so the source can be closed by
 * the caller as before.
 */
public final class ReadAhead implements RecordSource {

    private final RecordSource source;
    private final int depth;
    private volatile boolean stopped;

    /**
     * @param source the source to poll ahead; closed by {@link #close}
     * @param depth  the polls that may wait for the handler (at least 1)
     */
    public ReadAhead(RecordSource source, int depth) {
        if (depth < 1) {
            throw new IllegalArgumentException("depth must be at least 1: " + depth);
        }
        this.source = source;
        this.depth = depth;
    }

    /** What the polling thread hands over: a poll, the end, or what the source threw. */
    private sealed interface Item {
    }

    private record Poll(List<dev.kbackfill.core.record.SourceRecord> records, Map<Integer, Long> positions,
                        Map<Integer, Long> lost) implements Item {
    }

    private record End() implements Item {
    }

    private record Failed(Throwable error) implements Item {
    }

    @Override
    public void read(BoundedReader.Handler handler) throws InterruptedException {
        BlockingQueue<Item> polls = new ArrayBlockingQueue<>(depth);
        Thread poller = new Thread(() -> {
            Item last;
            try {
                source.read((records, positions, lost) -> polls.put(new Poll(records, positions, lost)));
                last = new End();
            } catch (InterruptedException e) {
                return; // the reading thread gave up on us
            } catch (Throwable t) {
                last = new Failed(t);
            }
            try {
                polls.put(last);
            } catch (InterruptedException e) {
                // the reading thread gave up on us
            }
        }, Thread.currentThread().getName() + "-poll");
        poller.setDaemon(true);
        poller.start();
        try {
            while (!stopped) {
                Item item = polls.poll(100, TimeUnit.MILLISECONDS);
                if (item instanceof Poll p) {
                    handler.accept(p.records(), p.positions(), p.lost());
                } else if (item instanceof Failed f) {
                    throw rethrow(f.error());
                } else if (item instanceof End) {
                    return;
                }
            }
        } finally {
            if (poller.isAlive()) {
                source.stop();
                poller.interrupt(); // it may wait to hand over a poll that nobody takes any more
                poller.join(TimeUnit.SECONDS.toMillis(30));
            }
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException re) {
            throw re;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t);
    }

    @Override
    public void stop() {
        stopped = true;
        source.stop();
    }

    @Override
    public void close() {
        source.close();
    }
}
