package dev.kbackfill.core.version;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

class VersionTest {

    private static Version v(String topic, int partition, long offset, long timestamp) {
        return new Version(topic, partition, offset, timestamp);
    }

    @Test
    void inOneLogTheHigherOffsetIsNewerWhateverTheTimestamps() {
        // offset 11's own timestamp went back to 1; its log time is the 9,999 of offset 10 before it
        Version later = new Version("t", 0, 11, 1, 9_999);
        assertThat(later.supersedes(v("t", 0, 10, 9_999))).isTrue();
        assertThat(v("t", 0, 10, 9_999).supersedes(later)).isFalse();
        assertThat(later.clockBehindLog()).isTrue();
    }

    @Test
    void acrossPartitionsTheLaterTimestampIsNewer() {
        assertThat(v("t", 0, 5, 2000).supersedes(v("t", 1, 100, 1000))).isTrue();
        assertThat(v("t", 1, 100, 1000).supersedes(v("t", 0, 5, 2000))).isFalse();
    }

    @Test
    void acrossTopicsTheLaterTimestampIsNewerNotTheHigherOffset() {
        // orders-v2 starts again at offset 0: its newer record must win over orders-v1's high offsets
        assertThat(v("orders-v2", 0, 3, 2000).supersedes(v("orders-v1", 0, 900, 1000))).isTrue();
        assertThat(v("orders-v1", 0, 900, 1000).supersedes(v("orders-v2", 0, 3, 2000))).isFalse();
    }

    @Test
    void equalTimestampsAreDecidedByAFixedTieBreakNotByArrival() {
        Version p0 = v("t", 0, 7, 1000);
        Version p1 = v("t", 1, 3, 1000);
        assertThat(p1.supersedes(p0)).isTrue();
        assertThat(p0.supersedes(p1)).isFalse();
        Version a = v("a", 0, 7, 1000);
        Version b = v("b", 0, 7, 1000);
        assertThat(b.supersedes(a)).isTrue();
        assertThat(a.supersedes(b)).isFalse();
    }

    @Test
    void theVersionATargetHoldsIsKeptOutSoAReplayWritesNothing() {
        assertThat(v("t", 2, 5, 1).supersedes(v("t", 2, 5, 1))).isFalse();
        assertThat(v("t", 2, 5, 1).supersedes(null)).isTrue();
    }

    @Test
    void aStoredVersionWithoutTopicIsTakenAsTheIncomingTopics() {
        assertThat(new Version("t", 0, 11, 1, 9_999).supersedes(v(null, 0, 10, 9_999))).isTrue();
        assertThat(v("t", 0, 9, 9_999).supersedes(new Version(null, 0, 10, 1, 9_999))).isFalse();
        assertThat(Version.compare(v("t", 0, 9, 5), v(null, 0, 9, 5))).isZero();
    }

    @Test
    void theOutcomeOfReplayingVersionsDoesNotDependOnTheirOrder() {
        Random random = new Random(42);
        for (int round = 0; round < 500; round++) {
            List<Version> versions = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                // one timestamp per (topic, partition, offset), increasing with the offset in each log
                String topic = random.nextBoolean() ? "a" : "b";
                int partition = random.nextInt(3);
                long offset = random.nextInt(4);
                versions.add(v(topic, partition, offset, 1000 + offset * 10 + (topic.equals("a") ? 0 : 5) * partition % 3));
            }
            Version expected = winner(versions);
            for (int shuffle = 0; shuffle < 5; shuffle++) {
                Collections.shuffle(versions, random);
                assertThat(winner(versions)).isEqualTo(expected);
            }
        }
    }

    private static Version winner(List<Version> versions) {
        Version held = null;
        for (Version v : versions) {
            if (v.supersedes(held)) {
                held = v;
            }
        }
        return held;
    }

    @Test
    void aRowOfAnotherWriterIsReplacedOnlyWhereTheLogOrItsOwnFieldSaysTheRecordIsNewer() {
        Version record = new Version("t", 0, 7, 100, 100, 15L);
        Version noField = new Version("t", 0, 7, 100, 100);
        Held unknown = new Held.Foreign(null);
        // its version unknown: kept, unless the log showed the record to be its key's last, or the user said so
        assertThat(noField.replaces(unknown, Version.ForeignRows.KEPT)).isFalse();
        assertThat(noField.replaces(unknown, Version.ForeignRows.NEWEST_IN_LOG)).isTrue();
        assertThat(noField.replaces(unknown, Version.ForeignRows.REPLACED)).isTrue();
        // its own version field decides whatever the batch says: newer replaces, the same or older is kept
        for (Version.ForeignRows rows : Version.ForeignRows.values()) {
            assertThat(record.replaces(new Held.Foreign(14L), rows)).isTrue();
            assertThat(record.replaces(new Held.Foreign(15L), rows)).isFalse();
            assertThat(record.replaces(new Held.Foreign(21L), rows)).isFalse();
            // a record without the field (a tombstone that found none) is older than a row with one
            assertThat(noField.replaces(new Held.Foreign(1L), rows)).isFalse();
            // nothing held: taken; a version kbackfill wrote: the rule
            assertThat(noField.replaces(Held.NOTHING, rows)).isTrue();
            assertThat(record.replaces(new Held.Known(record), rows)).isFalse();
            assertThat(record.replaces(new Held.Known(new Version("t", 0, 6, 100, 100, 15L)), rows)).isTrue();
        }
    }
}
