package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Random;

import static org.apache.kafka.common.IsolationLevel.READ_COMMITTED;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;

/**
 * Random logs (out-of-order timestamps, transaction markers stamped later, aborted records, deleted prefixes,
 * open transactions) and random time bounds, checked
 * against the definition of the plan rather than against a second implementation of it.
 */
class RangeResolverModelTest {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    @RepeatedTest(300)
    void everyTimeRangeMatchesItsDefinition(RepetitionInfo repetition) {
        long seed = 0x5eed_0000L + repetition.getCurrentRepetition();
        Random random = new Random(seed);
        FakeOffsetSource topic = new FakeOffsetSource("orders", 1 + random.nextInt(3));
        for (FakeOffsetSource.Log log : topic.logs.values()) {
            int records = random.nextInt(40);
            for (int i = 0; i < records; i++) {
                // mostly increasing, sometimes out of order by up to 10 minutes
                Instant t = T0.plusSeconds(60L * i + random.nextInt(600) - 300);
                switch (random.nextInt(8)) {
                    case 0 -> log.marker(T0.plusSeconds(86_400)); // written a day later, with old event times
                    case 1 -> log.abortedRecords(t);
                    default -> log.append(t);
                }
            }
            if (records > 0 && random.nextInt(4) == 0) {
                log.deleteBelow(random.nextInt(records));
            }
            if (records > 0 && random.nextInt(4) == 0) {
                log.openTransactionAt(log.logStart + random.nextInt((int) (log.highWatermark - log.logStart) + 1));
            }
        }
        Instant from = T0.plusSeconds(random.nextInt(3000) - 600);
        Instant to = from.plusSeconds(random.nextInt(3000));
        Plan plan = new RangeResolver(topic, Clock.fixed(T0.plusSeconds(86_400), ZoneOffset.UTC))
                .resolve(BackfillRequest.builder("orders").from(from.toString()).to(to.toString()).build());

        for (PartitionRange r : plan.partitions()) {
            FakeOffsetSource.Log log = topic.log(r.partition());
            String where = "seed " + seed + ", partition " + r.partition() + ", range [" + r.start() + ", " + r.end() + ")";
            long end = log.end(READ_COMMITTED);
            assertThat(r.logStart()).as(where).isEqualTo(log.logStart);
            assertThat(r.logEnd()).as(where).isEqualTo(end);
            assertThat(r.start()).as(where).isBetween(log.logStart, r.end());
            assertThat(r.end()).as(where).isLessThanOrEqualTo(end);
            for (Map.Entry<Long, Instant> rec : log.records.subMap(log.logStart, end).entrySet()) {
                long offset = rec.getKey();
                if (!log.visible(offset, READ_COMMITTED)) {
                    continue;
                }
                if (offset < r.start()) {
                    assertThat(rec.getValue()).as(where + ": record %d lies before start", offset).isBefore(from);
                }
                if (offset < r.end()) {
                    assertThat(rec.getValue()).as(where + ": record %d lies before end", offset).isBefore(to);
                }
            }
            if (r.start() < end) {
                assertThat(log.visible(r.start(), READ_COMMITTED)).as(where + ": a reader sees the record at start").isTrue();
                assertThat(log.records.get(r.start())).as(where + ": the record at start").isAfterOrEqualTo(from);
            } else {
                assertThat(r.notes()).extracting(Note::kind).as(where)
                        .containsAnyOf(Note.Kind.NO_RECORD_AT_OR_AFTER_FROM, Note.Kind.EMPTY_PARTITION);
            }
            if (r.end() < end) {
                assertThat(log.visible(r.end(), READ_COMMITTED)).as(where + ": a reader sees the record at end").isTrue();
                assertThat(log.records.get(r.end())).as(where + ": the record at end").isAfterOrEqualTo(to);
            } else if (log.logStart < end) {
                assertThat(r.notes()).extracting(Note::kind).as(where).contains(Note.Kind.NO_RECORD_AT_OR_AFTER_TO);
            }
            if (log.lastStable != null && log.lastStable < log.highWatermark) {
                assertThat(r.notes()).extracting(Note::kind).as(where).contains(Note.Kind.OPEN_TRANSACTION);
            }
        }
    }
}
