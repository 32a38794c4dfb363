package dev.kbackfill.sink.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import org.junit.jupiter.api.Test;

class BinderTest {

    /**
     * The COPY text of a record's timestamp, its date formatted once per day, is Instant's own text for every
     * millisecond: whole seconds, the epoch's neighbours, midnight and the day's last millisecond, years before 1970,
     * year 0 and after 9999, in and out of order, a second apart (a topic of one record a second).
     */
    @Test
    void aTimestampsCopyTextIsInstantsTextForAnyMillisecond() {
        Binder binder = new Binder(new PostgresDialect());
        java.util.Random random = new java.util.Random(5);
        long[] edges = {0, -1, 1, 999, 1000, -999, -1000, -1001, 1_700_000_000_000L, 1_700_000_000_999L,
                253_402_300_799_999L, 253_402_300_800_000L, -62_167_219_200_001L, -62_167_219_200_000L,
                1_704_067_199_999L, 1_704_067_200_000L, 86_400_000L, -86_400_000L, -86_400_001L,
                Long.MAX_VALUE / 1000, Long.MIN_VALUE / 1000};
        for (long millis : edges) {
            assertThat(binder.instantText(millis)).as("%d", millis).isEqualTo(Instant.ofEpochMilli(millis).toString());
        }
        long millis = 1_700_000_000_000L;
        for (int i = 0; i < 100_000; i++) {
            millis += random.nextInt(5) == 0 ? -random.nextInt(5000) : random.nextInt(700);
            long m = random.nextInt(50) == 0 ? random.nextLong() / 1000 : millis;
            assertThat(binder.instantText(m)).as("%d", m).isEqualTo(Instant.ofEpochMilli(m).toString());
        }
        for (long m = 1_704_060_000_000L; m < 1_704_060_000_000L + 200_000_000L; m += 997) {
            assertThat(binder.instantText(m)).as("%d", m).isEqualTo(Instant.ofEpochMilli(m).toString());
        }
    }
}
