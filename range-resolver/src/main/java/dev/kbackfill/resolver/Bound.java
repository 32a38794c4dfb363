package dev.kbackfill.resolver;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One side of a backfill request: where the range starts ({@code from}) or ends ({@code to}). Parse user text
 * with {@link BoundParser}; the Spark sentinels {@code -2}/{@code -1} become {@link Earliest}/{@link Latest}
 * there and appear nowhere else.
 */
public sealed interface Bound {

    /** The partition's log start offset: the oldest record still retained. */
    record Earliest() implements Bound {
    }

    /** The partition's end offset when the plan is resolved (the last stable offset under read_committed). */
    record Latest() implements Bound {
        @Override
        public boolean moving() {
            return true;
        }
    }

    /** The same offset on every partition. */
    record AtOffset(long offset) implements Bound {
        public AtOffset {
            if (offset < 0) {
                throw new IllegalArgumentException("offset must be >= 0: " + offset);
            }
        }
    }

    /** The first record whose timestamp is at or after {@code instant} (Kafka's ListOffsets semantics). */
    record AtTime(Instant instant) implements Bound {
        public AtTime {
            Objects.requireNonNull(instant, "instant");
        }

        @Override
        public Optional<Instant> instant(Instant now) {
            return Optional.of(instant);
        }
    }

    /** Like {@link AtTime}, at {@code ago} before the moment the plan is resolved ({@code now-1d}, {@code -2h}). */
    record RelativeTime(Duration ago) implements Bound {
        public RelativeTime {
            if (ago.isNegative()) {
                throw new IllegalArgumentException("a relative time lies in the past: " + ago);
            }
        }

        @Override
        public boolean moving() {
            return true;
        }

        @Override
        public Optional<Instant> instant(Instant now) {
            return Optional.of(now.minus(ago));
        }
    }

    /**
     * The start of a calendar day in {@code zone}, {@code daysAgo} days before the day the plan is resolved on:
     * {@code today} (0), {@code yesterday} (1), {@code today-7d} (7). It moves with the calendar, so that a nightly
     * job's command ({@code --from continue:2024-01-01 --to today}) stays the same from night to night.
     */
    record CalendarDay(int daysAgo, java.time.ZoneId zone) implements Bound {
        public CalendarDay {
            Objects.requireNonNull(zone, "zone");
            if (daysAgo < 0) {
                throw new IllegalArgumentException("a calendar day lies in the past: " + daysAgo);
            }
        }

        @Override
        public boolean moving() {
            return true;
        }

        @Override
        public Optional<Instant> instant(Instant now) {
            return Optional.of(now.atZone(zone).toLocalDate().minusDays(daysAgo).atStartOfDay(zone).toInstant());
        }
    }

    /**
     * Spark-style per-partition positions ({@code {"orders":{"0":23,"1":-2}}}); each value is
     * {@link Earliest}, {@link Latest} or {@link AtOffset}.
     */
    record PerPartition(String topic, SortedMap<Integer, Bound> positions) implements Bound {
        public PerPartition {
            Objects.requireNonNull(topic, "topic");
            positions = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(positions));
            for (Map.Entry<Integer, Bound> e : positions.entrySet()) {
                if (e.getValue() instanceof PerPartition || e.getValue() instanceof AtTime
                        || e.getValue() instanceof RelativeTime || e.getValue() instanceof CalendarDay) {
                    throw new IllegalArgumentException("partition " + e.getKey() + ": not an offset: " + e.getValue());
                }
            }
        }

        @Override
        public boolean moving() {
            return positions.values().stream().anyMatch(Bound::moving);
        }
    }

    /**
     * {@code --from continue:FIRST}: where the job's previous run ended, partition by partition (a partition the
     * previous plan did not have, from its earliest offset), so that consecutive runs cover the topic without a gap
     * or an overlap whatever their schedule; {@code first} where the job has no previous run. Only a job can resolve
     * it past its first run ({@link RangeResolver#resolveContinuing}).
     */
    record Continue(Bound first) implements Bound {
        public Continue {
            Objects.requireNonNull(first, "first");
            if (first instanceof Continue) {
                throw new IllegalArgumentException("continue within continue");
            }
        }

        @Override
        public boolean moving() {
            return true;
        }

        @Override
        public Optional<Instant> instant(Instant now) {
            return first.instant(now);
        }
    }

    /**
     * Positions another reader of the topic keeps, read once when the plan is resolved and frozen in it as offsets:
     * where a Spark Structured Streaming query's checkpoint stopped ({@code checkpoint:PATH}) or started
     * ({@code checkpoint-start:PATH}), a consumer group's committed offsets ({@code group:NAME}) or a Kafka Connect
     * sink's ({@code connect:NAME}, its group {@code connect-NAME}). {@code fallback} ({@link Earliest},
     * {@link Latest} or {@link AtOffset}) is the bound of a partition the positions do not cover; without one such a
     * partition is an error naming it. Never a live group joined: its offsets are listed, nothing is committed.
     */
    record External(Kind kind, String ref, Optional<Bound> fallback) implements Bound {
        public External {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(ref, "ref");
            Objects.requireNonNull(fallback, "fallback");
            fallback.ifPresent(f -> {
                if (!(f instanceof Earliest || f instanceof Latest || f instanceof AtOffset)) {
                    throw new IllegalArgumentException("a fallback is an offset bound: " + f);
                }
            });
        }

        /** Where the positions come from. */
        public enum Kind {
            CHECKPOINT("checkpoint"), CHECKPOINT_START("checkpoint-start"), GROUP("group"), CONNECT("connect");

            public final String prefix;

            Kind(String prefix) {
                this.prefix = prefix;
            }
        }

        @Override
        public boolean moving() {
            return true; // the reader moves on: a job's next run reads its positions again
        }
    }

    /**
     * Whether this bound names a different place each time it is resolved ({@code latest}, relative times). A
     * job whose request is moving gets a fresh plan once its stored plan is complete; a fixed one is done.
     */
    default boolean moving() {
        return false;
    }

    /** The instant this bound denotes if it is a time, given the moment of resolution. */
    default Optional<Instant> instant(Instant now) {
        return Optional.empty();
    }
}
