package dev.kbackfill.sink.jdbc;

import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Small helpers to build SQL text readably. */
final class Sql {

    private Sql() {
    }

    static String join(List<String> items, Function<String, String> each) {
        return items.stream().map(each).collect(Collectors.joining(", "));
    }

    static String placeholders(int n) {
        return String.join(", ", java.util.Collections.nCopies(n, "?"));
    }
}
