package dev.kbackfill.resolver;

/**
 * The edit (Levenshtein) distance of two names, for "did you mean" checks, which care only whether it is 1 or 2.
 */
public final class EditDistance {

    private EditDistance() {
    }

    /**
     * The edit distance of {@code a} and {@code b}, exact wherever it is at most 2; 3 when their lengths alone put
     * them further apart (not compared letter by letter).
     */
    public static int atMost2(String a, String b) {
        if (Math.abs(a.length() - b.length()) > 2) {
            return 3;
        }
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                current[j] = Math.min(previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1),
                        Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] t = previous;
            previous = current;
            current = t;
        }
        return previous[b.length()];
    }

    /** The candidate within two edits of {@code name} (the nearest, the first of equals), for "did you mean". */
    public static java.util.Optional<String> nearest(String name, java.util.Collection<String> candidates) {
        String best = null;
        int bestDistance = 3;
        for (String c : candidates) {
            int d = atMost2(name, c);
            if (d < bestDistance) {
                best = c;
                bestDistance = d;
            }
        }
        return java.util.Optional.ofNullable(best);
    }
}
