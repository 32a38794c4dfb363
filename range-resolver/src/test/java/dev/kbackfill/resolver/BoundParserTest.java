package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class BoundParserTest {

    private static final ZoneId UTC = ZoneOffset.UTC;
    private static final ZoneId PARIS = ZoneId.of("Europe/Paris");

    private static Bound parse(String text) {
        return BoundParser.parse("--from", text, UTC);
    }

    @ParameterizedTest
    @ValueSource(strings = {"earliest", "EARLIEST", "-2", " earliest "})
    void earliestAndMinusTwoAreTheLogStart(String text) {
        assertThat(parse(text)).isEqualTo(new Bound.Earliest());
    }

    @ParameterizedTest
    @ValueSource(strings = {"latest", "Latest", "-1"})
    void latestAndMinusOneAreTheEnd(String text) {
        assertThat(parse(text)).isEqualTo(new Bound.Latest());
    }

    @Test
    void offsetPrefixGivesTheSameOffsetOnEveryPartition() {
        assertThat(parse("offset:0")).isEqualTo(new Bound.AtOffset(0));
        assertThat(parse("offset:123456")).isEqualTo(new Bound.AtOffset(123456));
    }

    @Test
    void anIsoDateIsTheStartOfThatDayInTheZone() {
        assertThat(parse("2024-01-01")).isEqualTo(new Bound.AtTime(Instant.parse("2024-01-01T00:00:00Z")));
        assertThat(BoundParser.parse("--from", "2024-01-01", PARIS))
                .isEqualTo(new Bound.AtTime(Instant.parse("2023-12-31T23:00:00Z")));
    }

    @ParameterizedTest
    @CsvSource({
            "2024-01-01T12:00:00Z, 2024-01-01T12:00:00Z",
            "2024-01-01T12:00Z, 2024-01-01T12:00:00Z",
            "2024-01-01T12:00+02:00, 2024-01-01T10:00:00Z",
            "2024-01-01T12:00:00.250-05:00, 2024-01-01T17:00:00.250Z",
            "2024-07-01T12:00[Europe/Paris], 2024-07-01T10:00:00Z",
            "2024-01-01 12:00:00Z, 2024-01-01T12:00:00Z",
    })
    void isoDateTimesWithAnOffsetOrZoneIgnoreTheDefaultZone(String text, String expected) {
        assertThat(BoundParser.parse("--from", text, PARIS)).isEqualTo(new Bound.AtTime(Instant.parse(expected)));
    }

    @Test
    void aLocalDateTimeIsReadInTheZone() {
        assertThat(BoundParser.parse("--from", "2024-07-01T12:00", PARIS))
                .isEqualTo(new Bound.AtTime(Instant.parse("2024-07-01T10:00:00Z")));
        assertThat(BoundParser.parse("--from", "2024-07-01 12:00:30", UTC))
                .isEqualTo(new Bound.AtTime(Instant.parse("2024-07-01T12:00:30Z")));
    }

    @Test
    void aLocalTimeSkippedByDaylightSavingIsRejected() {
        assertThatThrownBy(() -> BoundParser.parse("--from", "2024-03-31T02:30", PARIS))
                .isInstanceOf(RequestException.class)
                .hasMessageContaining("'2024-03-31T02:30'")
                .hasMessageContaining("does not exist in Europe/Paris");
    }

    @Test
    void aLocalTimeThatOccursTwiceIsRejectedNamingBothOffsets() {
        assertThatThrownBy(() -> BoundParser.parse("--to", "2024-10-27T02:30", PARIS))
                .isInstanceOf(RequestException.class)
                .hasMessageStartingWith("invalid --to '2024-10-27T02:30'")
                .hasMessageContaining("2024-10-27T02:30+02:00 or 2024-10-27T02:30+01:00");
    }

    @Test
    void thirteenDigitsAreEpochMillis() {
        assertThat(parse("1704067200000")).isEqualTo(new Bound.AtTime(Instant.parse("2024-01-01T00:00:00Z")));
    }

    @Test
    void tenDigitsCouldBeSecondsAndAreRejectedWithBothSpellings() {
        assertThatThrownBy(() -> parse("1704067200"))
                .isInstanceOf(RequestException.class)
                .hasMessageStartingWith("invalid --from '1704067200': ambiguous number")
                .hasMessageContaining("1704067200000")
                .hasMessageContaining("offset:1704067200");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "100", "12345678901234"})
    void otherBareNumbersAreAmbiguous(String text) {
        assertThatThrownBy(() -> parse(text))
                .isInstanceOf(RequestException.class)
                .hasMessageContaining("ambiguous number")
                .hasMessageContaining("offset:" + text);
    }

    @Test
    void negativeNumbersOtherThanTheSparkSentinelsAreRejected() {
        assertThatThrownBy(() -> parse("-3"))
                .isInstanceOf(RequestException.class)
                .hasMessageContaining("-2 (earliest) and -1 (latest)");
    }

    @ParameterizedTest
    @CsvSource({
            "now, PT0S",
            "now-1d, PT24H",
            "-2h, PT2H",
            "-30m, PT30M",
            "now - 15s, PT15S",
            "-1w, PT168H",
            "-500ms, PT0.5S",
            "-P1D, PT24H",
            "now-PT90M, PT1H30M",
            "-p1dt2h, PT26H",
    })
    void relativeTimesAreDurationsBeforeResolution(String text, String ago) {
        assertThat(parse(text)).isEqualTo(new Bound.RelativeTime(Duration.parse(ago)));
        assertThat(parse(text).moving()).isTrue();
    }

    @Test
    void sparkJsonMapsSentinelsPerPartition() {
        Bound b = parse("{\"orders\":{\"0\":23,\"1\":-2,\"2\":-1}}");
        assertThat(b).isInstanceOf(Bound.PerPartition.class);
        Bound.PerPartition pp = (Bound.PerPartition) b;
        assertThat(pp.topic()).isEqualTo("orders");
        assertThat(pp.positions()).containsExactly(
                java.util.Map.entry(0, new Bound.AtOffset(23)),
                java.util.Map.entry(1, new Bound.Earliest()),
                java.util.Map.entry(2, new Bound.Latest()));
        assertThat(pp.moving()).isTrue();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"orders\":{\"0\":23 | malformed JSON",
            "{\"orders\":{\"x\":23}} | 'x' is not a partition number",
            "{\"orders\":{\"0\":-3}} | offset -3 is negative",
            "{\"orders\":{\"0\":1.5}} | '1.5' is not an offset",
            "{\"orders\":{}} | must map to an object of partition offsets",
            "{\"a\":{\"0\":1},\"b\":{\"0\":1}} | exactly one topic",
            "{\"orders\":{\"0\":1,\"0\":2}} | malformed JSON",
    })
    void malformedSparkJsonIsRejectedWithTheReason(String text, String reason) {
        assertThatThrownBy(() -> parse(text))
                .isInstanceOf(RequestException.class)
                .hasMessageStartingWith("invalid --from '" + text + "'")
                .hasMessageContaining(reason);
    }

    @ParameterizedTest
    @ValueSource(strings = {"2024-13-01", "tomorrow", "2024-01-01T25:00", "offset:abc", "offset:-1", ""})
    void garbageIsRejectedListingEveryAcceptedForm(String text) {
        assertThatThrownBy(() -> parse(text))
                .isInstanceOf(RequestException.class)
                .hasMessageStartingWith("invalid --from '" + text + "'")
                .hasMessageEndingWith("accepted forms: " + BoundParser.acceptedForms());
    }

    @Test
    void errorMessagesAreOneLine() {
        assertThatThrownBy(() -> parse("{\"orders\":\n{\"0\":"))
                .satisfies(e -> assertThat(e.getMessage().replace("{\"orders\":\n{\"0\":", "")).doesNotContain("\n"));
    }

    @Test
    void unknownZoneNamesTheZoneAndTheAcceptedForms() {
        assertThatThrownBy(() -> BoundParser.parseZone("Mars/Olympus"))
                .isInstanceOf(RequestException.class)
                .hasMessage("invalid zone 'Mars/Olympus': expected a region id (Europe/Paris, America/New_York), "
                        + "UTC, or an offset (+02:00)");
        assertThat(BoundParser.parseZone("+02:00")).isEqualTo(ZoneOffset.ofHours(2));
    }

    @Test
    void calendarDaysAreTheStartOfADayInTheZoneAndMoveWithTheCalendar() {
        java.time.ZoneId paris = java.time.ZoneId.of("Europe/Paris");
        assertThat(BoundParser.parse("--to", "today", paris)).isEqualTo(new Bound.CalendarDay(0, paris));
        assertThat(BoundParser.parse("--to", "Yesterday", paris)).isEqualTo(new Bound.CalendarDay(1, paris));
        assertThat(BoundParser.parse("--from", "today-7d", paris)).isEqualTo(new Bound.CalendarDay(7, paris));
        assertThat(BoundParser.parse("--from", "yesterday - 1d", paris)).isEqualTo(new Bound.CalendarDay(2, paris));
        // 01:30 UTC on 10 March is 02:30 in Paris: its day began at 23:00 UTC the day before
        Instant now = Instant.parse("2024-03-10T01:30:00Z");
        assertThat(new Bound.CalendarDay(0, paris).instant(now)).contains(Instant.parse("2024-03-09T23:00:00Z"));
        assertThat(new Bound.CalendarDay(1, paris).instant(now)).contains(Instant.parse("2024-03-08T23:00:00Z"));
        assertThat(new Bound.CalendarDay(0, java.time.ZoneOffset.UTC).instant(now))
                .contains(Instant.parse("2024-03-10T00:00:00Z"));
        assertThat(new Bound.CalendarDay(0, paris).moving()).isTrue();
        assertThatThrownBy(() -> BoundParser.parse("--to", "today-9999999d", paris))
                .isInstanceOf(RequestException.class).hasMessageContaining("too many days back");
        assertThatThrownBy(() -> BoundParser.parse("--to", "tomorrow", paris))
                .isInstanceOf(RequestException.class).hasMessageContaining("today, yesterday, today-7d");
    }
}
