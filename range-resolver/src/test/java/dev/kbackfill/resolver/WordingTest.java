package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A library caller reads the resolver's messages and notes in the words of its API; a program with options of its
 * own renders the same messages in them.
 */
class WordingTest {

    private static final Instant NOW = Instant.parse("2024-01-03T00:00:00Z");
    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    /** Names as a command line would give them, each distinct from the library's and from every other. */
    private static final Wording OPTIONS = Wording.of(optionNames());

    private final FakeOffsetSource topic = new FakeOffsetSource("orders", 1);
    private final RangeResolver resolver = new RangeResolver(topic, Clock.fixed(NOW, ZoneOffset.UTC));

    private static Map<Wording.Term, String> optionNames() {
        Map<Wording.Term, String> m = new EnumMap<>(Wording.Term.class);
        for (Wording.Term t : Wording.Term.values()) {
            m.put(t, "--" + t.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
        }
        return m;
    }

    @AfterEach
    void libraryWordsAgain() {
        Wording.use(Wording.LIBRARY);
    }

    /** Requests that are refused, each for a reason that names one of the request's settings. */
    private List<Supplier<Object>> refusals() {
        topic.log(0).append(T0, T0.plusSeconds(3600), T0.plusSeconds(7200)).deleteBelow(2);
        List<Supplier<Object>> all = new ArrayList<>();
        all.add(() -> BackfillRequest.builder("orders").from("yesterdayy").to("latest").build());
        all.add(() -> BackfillRequest.builder("orders").from("earliest").to("continue:earliest").build());
        all.add(() -> BackfillRequest.builder("orders").from("continue").to("latest").build());
        all.add(() -> BackfillRequest.builder("orders").to("latest").build());
        all.add(() -> BackfillRequest.builder("orders").from("earliest").build());
        all.add(() -> BackfillRequest.builder("orders").from("2024-01-02").to("2024-01-01").build());
        all.add(() -> BackfillRequest.builder("orders").from("latest").to("earliest").build());
        all.add(() -> BackfillRequest.builder("orders").from("{\"other\":{\"0\":1}}").to("latest").build());
        all.add(() -> BackfillRequest.builder("bad topic").from("earliest").to("latest").build());
        all.add(() -> BackfillRequest.builder("orders").from("earliest").to("latest").partitions(new TreeSet<>())
                .build());
        all.add(() -> PartitionFilter.parse("5-2"));
        all.add(() -> BoundParser.parseZone("Mars/Olympus"));
        all.add(() -> BackfillRequest.builder("orders").from("earliest").to("latest")
                .readers(Map.of("fs.s3a.secret.key", "x")).build());
        all.add(() -> BackfillRequest.builder("orders").from("earliest").to("latest")
                .readers(Map.of(BackfillRequest.CONNECT_URL, "ftp://connect")).build());
        all.add(() -> resolver.resolve(BackfillRequest.builder("orders").from("offset:0").to("latest").build()));
        return all;
    }

    @Test
    void aLibraryCallerReadsEveryRefusalInTheWordsOfTheApiAndNoOptionName() {
        List<String> messages = refusals().stream().map(r -> catchThrowableOfType(RequestException.class, r::get)
                .getMessage()).toList();
        assertThat(messages).hasSize(15).allSatisfy(m -> assertThat(m).doesNotContain("--").doesNotContain("\uE000"));
        assertThat(messages.get(0)).startsWith("invalid from bound 'yesterdayy'");
        assertThat(messages.get(1)).startsWith("invalid to bound 'continue:earliest': continue is a from bound only");
        assertThat(messages.get(3)).startsWith("missing from bound: say where the backfill starts");
        assertThat(messages.get(5)).startsWith("from bound '2024-01-02' (2024-01-02T00:00:00Z) is after to bound");
        assertThat(messages.get(7)).contains("but topic is 'orders'");
        assertThat(messages.get(9)).isEqualTo("invalid partitions: the set is empty");
        assertThat(messages.get(12)).startsWith("invalid reader setting 'fs.s3a.secret.key'");
        assertThat(messages.get(13)).startsWith("invalid reader setting connect.url 'ftp://connect'");
        assertThat(messages.get(14)).endsWith("pass allowDataLoss(true) to backfill what is left from 2");
    }

    @Test
    void aProgramWithOptionsRendersTheSameRefusalsInItsOwnWords() {
        List<RequestException> refused = refusals().stream()
                .map(r -> catchThrowableOfType(RequestException.class, r::get)).toList();
        List<String> asked = refused.stream().map(e -> e.getMessage(OPTIONS)).toList();
        assertThat(asked.get(0)).startsWith("invalid --from 'yesterdayy'");
        assertThat(asked.get(1)).startsWith("invalid --to 'continue:earliest': continue is a --from only");
        assertThat(asked.get(7)).contains("but --topic is 'orders'");
        assertThat(asked.get(9)).isEqualTo("invalid --partitions: the set is empty");
        assertThat(asked.get(11)).startsWith("invalid --zone 'Mars/Olympus'");
        assertThat(asked.get(12)).startsWith("invalid --reader-setting 'fs.s3a.secret.key'");
        assertThat(asked.get(14)).endsWith("pass --allow-data-loss to backfill what is left from 2");
        // every message differs from the library's only in the names: the terms are all that is rendered
        List<Wording.Term> longestFirst = java.util.Arrays.stream(Wording.Term.values())
                .sorted(java.util.Comparator.comparing((Wording.Term t) -> OPTIONS.name(t).length()).reversed()).toList();
        for (int i = 0; i < refused.size(); i++) {
            String back = asked.get(i);
            for (Wording.Term t : longestFirst) {
                back = back.replace(OPTIONS.name(t), Wording.LIBRARY.name(t));
            }
            assertThat(back).isEqualTo(refused.get(i).getMessage(Wording.LIBRARY));
        }

        Wording.use(OPTIONS);
        assertThat(refused.get(0).getMessage()).startsWith("invalid --from 'yesterdayy'");
        assertThat(BoundParser.acceptedForms()).contains("in --zone").contains("for --from continue:BOUND");
    }

    @Test
    void notesRenderWhenReadAndAPlanFileHoldsTheWordsOfTheProgramThatWroteIt() {
        topic.log(0).append(T0, T0.plusSeconds(3600), T0.plusSeconds(7200)).deleteBelow(2);
        Plan plan = resolver.resolve(BackfillRequest.builder("orders").from("offset:0").to("latest")
                .allowDataLoss(true).build());
        Note lost = plan.partition(0).orElseThrow().notes().get(0);
        assertThat(lost.message()).startsWith("from bound offset 0 is below the log start offset 2");
        assertThat(lost.message(OPTIONS)).startsWith("--from offset 0 is below the log start offset 2");
        assertThat(plan.toJson()).contains("from bound offset 0").doesNotContain("--from");

        Wording.use(OPTIONS);
        assertThat(lost.message()).startsWith("--from offset 0");
        String written = plan.toJson();
        assertThat(written).contains("--from offset 0").doesNotContain("\\uE000").doesNotContain("\uE000");
        Plan read = Plan.fromJson(written);
        assertThat(read.partition(0).orElseThrow().notes()).containsExactly(lost);
        Wording.use(Wording.LIBRARY);
        assertThat(read.partition(0).orElseThrow().notes().get(0).message()).startsWith("--from offset 0");
    }

    @Test
    void aWordingLeavesNoTermUnnamedAndRefusesABlankName() {
        Wording partial = Wording.of(Map.of(Wording.Term.FROM, "--start"));
        assertThat(partial.name(Wording.Term.FROM)).isEqualTo("--start");
        assertThat(partial.name(Wording.Term.TO)).isEqualTo("to bound");
        assertThat(partial.render("invalid " + Wording.Term.TO)).isEqualTo("invalid to bound");
        assertThat(catchThrowableOfType(IllegalArgumentException.class,
                () -> Wording.of(Map.of(Wording.Term.TO, " ")))).hasMessageContaining("TO");
        assertThat(OPTIONS).isEqualTo(Wording.of(optionNames()));
    }
}
