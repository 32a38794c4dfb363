package dev.kbackfill.sink.delta;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/** Rows are sorted, and files pruned, in the order Delta's statistics use: UTF-8 bytes, unsigned. */
class KeyOrderTest {

    private static int utf8Order(String a, String b) {
        return Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void stringsCompareAsTheirUtf8BytesWithoutEncoding() {
        // U+FF21 (fullwidth A) sorts before U+1F600 (an emoji, two surrogates) in UTF-8, after it in UTF-16
        assertThat(dev.kbackfill.sink.lake.KeyOrder.compareUtf8("\uFF21", "\uD83D\uDE00")).isNegative();
        assertThat("\uFF21".compareTo("\uD83D\uDE00")).isPositive();
        Random random = new Random(42);
        char[] alphabet = {'a', 'b', 'z', '\u00e9', '\u4e2d', '\uD7FF', '\uE000', '\uFFFD', '\uD83D', '\uDE00', '\uDBFF', '\uDFFF'};
        for (int i = 0; i < 20_000; i++) {
            String a = randomString(random, alphabet);
            String b = random.nextInt(4) == 0 ? a + randomString(random, alphabet) : randomString(random, alphabet);
            assertThat(Integer.signum(dev.kbackfill.sink.lake.KeyOrder.compareUtf8(a, b))).as("%s vs %s", a, b)
                    .isEqualTo(Integer.signum(utf8Order(a, b)));
        }
    }

    private static String randomString(Random random, char[] alphabet) {
        StringBuilder sb = new StringBuilder();
        int n = random.nextInt(5);
        while (sb.length() < n) {
            // whole supplementary characters only: lone surrogates have no UTF-8 form
            if (random.nextInt(5) == 0) {
                sb.appendCodePoint(0x10000 + random.nextInt(0x10FFFF - 0x10000));
            } else {
                char c = alphabet[random.nextInt(alphabet.length)];
                if (!Character.isSurrogate(c)) {
                    sb.append(c);
                }
            }
        }
        return sb.toString();
    }

    @Test
    void rowsSortByEveryKeyColumnInTurn() {
        List<Object[]> rows = new ArrayList<>(List.of(
                new Object[] {"b", 1L, "x"}, new Object[] {"a", 2L, "y"}, new Object[] {"a", 1L, "z"},
                new Object[] {"\uD83D\uDE00", 0L, "e"}, new Object[] {"\uFF21", 0L, "f"}));
        dev.kbackfill.sink.lake.KeyOrder.sortByKey(rows, new int[] {0, 1});
        assertThat(rows).extracting(r -> r[2]).containsExactly("z", "y", "x", "f", "e");
    }

    @Test
    void rowsSortInUtf8OrderAndKeepTheOrderOfEqualKeys() {
        Random random = new Random(7);
        char[] plain = {'a', 'b', 'z', '0', '9', '-', '\u00e9', '\u4e2d', '\uD7FF'};
        char[] any = {'a', 'b', '\u00e9', '\uD7FF', '\uE000', '\uFF21', '\uFFFD'};
        for (int round = 0; round < 6; round++) {
            // below U+D800 only, with characters above it (where UTF-16 order is not UTF-8 order), or with nulls
            char[] alphabet = round % 3 == 1 ? any : plain;
            int n = round < 3 ? 40_000 : 300;
            List<Object[]> rows = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Object key = randomString(random, alphabet);
                if (round % 3 == 2 && random.nextInt(100) == 0) {
                    key = null;
                }
                rows.add(new Object[] {key, i});
            }
            List<Object[]> expected = new ArrayList<>(rows);
            expected.sort((x, y) -> x[0] instanceof String a && y[0] instanceof String b ? utf8Order(a, b)
                    : dev.kbackfill.sink.lake.KeyOrder.compareValues(x[0], y[0]));
            dev.kbackfill.sink.lake.KeyOrder.sortByKey(rows, new int[] {0});
            assertThat(rows).as("round %d", round).containsExactlyElementsOf(expected);
        }
    }
}
