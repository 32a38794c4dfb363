package dev.kbackfill.core.version;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.FieldClock;
import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.JsonText;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.resolver.RequestException;
import org.junit.jupiter.api.Test;

/** {@code --version-field}: its forms, its values as they compare, its place in the rule, and tombstones' fields. */
class VersionFieldTest {

    @Test
    void theOptionTakesAFieldAndAType() {
        assertThat(VersionField.parse("lsn")).isEqualTo(new VersionField("lsn", VersionField.Type.INTEGER));
        assertThat(VersionField.parse("source.ts_ms:integer").path()).isEqualTo("source.ts_ms");
        assertThat(VersionField.parse("updated_at:timestamp").type()).isEqualTo(VersionField.Type.TIMESTAMP);
        assertThat(VersionField.parse("v:string").label()).isEqualTo("v:string");
        for (String bad : List.of("", "a:float", ".a", "a.", "a..b", "a b")) {
            assertThatThrownBy(() -> VersionField.parse(bad)).isInstanceOf(RequestException.class)
                    .hasMessageContaining("--version-field");
        }
    }

    @Test
    void valuesCompareAsTheirTypeAndAWrongOrMissingOneIsRefusedNamingIt() {
        VersionField lsn = VersionField.parse("lsn");
        assertThat(lsn.valueOf(Map.of("lsn", 7L))).isEqualTo(7L);
        assertThat(lsn.valueOf(Map.of("lsn", new BigDecimal("8")))).isEqualTo(8L);
        assertThatThrownBy(() -> lsn.valueOf(Map.of("lsn", "7"))).hasMessageContaining("'7', not a whole number");
        assertThatThrownBy(() -> lsn.valueOf(Map.of("other", 1L))).hasMessageContaining("'lsn' is missing or null");
        assertThatThrownBy(() -> lsn.valueOf(Map.of("lsn", new BigDecimal("1.5")))).hasMessageContaining("not a whole number");
        VersionField at = VersionField.parse("updated_at:timestamp");
        long micros = 1_704_067_200_000_000L + 500_000L;
        assertThat(at.valueOf(Map.of("updated_at", "2024-01-01T00:00:00.5Z"))).isEqualTo(micros);
        assertThat(at.valueOf(Map.of("updated_at", "2024-01-01T01:00:00.5+01:00"))).isEqualTo(micros);
        assertThat(at.valueOf(Map.of("updated_at", "2024-01-01T00:00:00.5"))).isEqualTo(micros);
        assertThat(at.valueOf(Map.of("updated_at", Instant.parse("2024-01-01T00:00:00.5Z")))).isEqualTo(micros);
        assertThat(at.valueOf(Map.of("updated_at", 1_704_067_200_500L))).isEqualTo(micros);
        assertThatThrownBy(() -> at.valueOf(Map.of("updated_at", "yesterday"))).hasMessageContaining("not a timestamp");
        VersionField s = VersionField.parse("v:string");
        assertThat(s.valueOf(Map.of("v", "b"))).isEqualTo("b");
        assertThatThrownBy(() -> s.valueOf(Map.of("v", 1L))).hasMessageContaining("not a string");
    }

    @Test
    void aDottedNameReachesIntoANestedObjectAsDebeziumsSourceBlock() {
        VersionField lsn = VersionField.parse("source.lsn");
        assertThat(lsn.valueOf(Map.of("source", new JsonText("{\"lsn\":123456789012,\"db\":\"app\"}")))).isEqualTo(123456789012L);
        assertThat(lsn.valueOf(Map.of("source.lsn", 5L))).as("a top-level field of that very name first").isEqualTo(5L);
        assertThatThrownBy(() -> lsn.valueOf(Map.of("source", new JsonText("{\"db\":\"app\"}"))))
                .hasMessageContaining("missing");
    }

    @Test
    void theDecoderReadsTheFieldIntoEveryChangeWithAValueAndARecordWithoutItIsAPoisonRecord() {
        RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "k", "v", List.of(), null,
                VersionField.parse("source.lsn"));
        Change c = decoder.decode(record(3, "{\"id\":1,\"source\":{\"lsn\":42}}"));
        assertThat(c.versionField()).isEqualTo(42L);
        assertThat(c.version().field()).isEqualTo(42L);
        assertThat(c.values()).containsKey("source");
        assertThat(decoder.decode(record(4, null)).versionField()).as("a tombstone: the clock gives it one").isNull();
        assertThatThrownBy(() -> decoder.decode(record(5, "{\"id\":1}"))).isInstanceOf(DecodeException.class)
                .hasMessageContaining("t/0@5").hasMessageContaining("'source.lsn' is missing");
    }

    /** The field first, then the log; none older than any; still a strict total order. */
    @Test
    void theRuleWithFieldsIsAStrictTotalOrderThatComparesTheFieldFirst() {
        assertThat(new Version("t", 0, 9, 9, 9, 1L).supersedes(new Version("t", 0, 1, 1, 1, 2L))).isFalse();
        assertThat(new Version("t", 0, 1, 1, 1, 2L).supersedes(new Version("t", 0, 9, 9, 9, 1L))).isTrue();
        assertThat(new Version("t", 0, 1, 1, 1, 0L).supersedes(new Version("t", 0, 9, 9, 9, null))).isTrue();
        assertThat(new Version("t", 0, 2, 1, 1, 3L).supersedes(new Version("t", 0, 1, 1, 1, 3L))).as("ties: the log").isTrue();
        Random random = new Random(5);
        List<Version> versions = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            long ts = random.nextInt(3);
            versions.add(new Version("t", random.nextInt(2), random.nextInt(3), ts, ts + random.nextInt(2),
                    random.nextInt(4) == 0 ? null : (Comparable<?>) (long) random.nextInt(3)));
        }
        for (Version x : versions) {
            assertThat(x.supersedes(x)).isFalse();
            for (Version y : versions) {
                assertThat(Integer.signum(Version.compare(x, y))).isEqualTo(-Integer.signum(Version.compare(y, x)));
                for (Version z : versions) {
                    if (Version.compare(x, y) < 0 && Version.compare(y, z) < 0) {
                        assertThat(Version.compare(x, z)).isNegative();
                    }
                }
            }
        }
    }

    @Test
    void aTombstoneTakesTheFieldOfTheNearestRecordBeforeItWithinReachAskingTheLogOnce() {
        List<String> asked = new ArrayList<>();
        FieldClock clock = new FieldClock((p, o) -> {
            asked.add(p + "@" + o);
            return p == 0 ? Optional.of(Map.entry(o - 1, (Comparable<?>) 99L)) : Optional.empty();
        });
        assertThat(clock.stamp(tombstone(0, 500)).versionField()).as("before any record: read back").isEqualTo(99L);
        assertThat(clock.stamp(tombstone(1, 10)).versionField()).as("nothing before it").isNull();
        assertThat(clock.stamp(tombstone(1, 11)).versionField()).isNull();
        assertThat(asked).containsExactly("0@500", "1@10");
        clock.stamp(value(1, 12, 5L));
        assertThat(clock.stamp(tombstone(1, 13)).versionField()).isEqualTo(5L);
        assertThat(clock.stamp(tombstone(1, 12 + VersionField.TOMBSTONE_REACH)).versionField()).isEqualTo(5L);
        assertThat(clock.stamp(tombstone(1, 13 + VersionField.TOMBSTONE_REACH)).versionField())
                .as("out of reach").isNull();
        assertThat(clock.stamp(value(0, 501, 3L)).versionField()).as("a value keeps its own").isEqualTo(3L);
        assertThat(clock.stamp(tombstone(0, 502)).versionField()).as("the nearest, not the highest").isEqualTo(3L);
    }

    private static SourceRecord record(long offset, String json) {
        return new SourceRecord("t", 0, offset, 1000, "k".getBytes(), json == null ? null : json.getBytes(), null);
    }

    private static Change tombstone(int partition, long offset) {
        return new Change(Map.of("k", "a"), null, partition, offset, 1);
    }

    private static Change value(int partition, long offset, long field) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("x", 1);
        return new Change(Map.of("k", "a"), v, partition, offset, 1).withVersionField(field);
    }
}
