package dev.kbackfill.core.record;

import java.math.BigDecimal;
import java.util.Optional;

/**
 * Whether a key keeps its identity in a key column, one rule for every sink that converts keys into typed columns: a
 * key is its value and its type ({@link KeyIdentity}: the text {@code "8"} is not the number {@code 8}), so a key is
 * written into a column only where distinct keys stay distinct rows there.
 * <ul>
 *   <li>Text into a number column only as the number's own text: {@code "8"}, not {@code "08"} or {@code "8.0"},
 *   which the column would give back as {@code 8}, the row of the key {@code "8"}.</li>
 *   <li>Where keys come typed (a JSON or schema-registry key, {@code --key-fields}), never text into a number column,
 *   nor a number or a boolean into a text column: {@code 8} and {@code "8"} would be one row.</li>
 * </ul>
 * A key that breaks the rule is a poison record of its own, named with the reason.
 */
public final class KeyTypes {

    /** What a key column holds, as far as the rule cares. */
    public enum Kind {
        NUMBER, TEXT, OTHER
    }

    private KeyTypes() {
    }

    /**
     * Why {@code value} would lose its identity in key column {@code column} of kind {@code kind} (its type shown as
     * {@code type}), or empty where it keeps it.
     *
     * @param typedKeys whether the job's keys come typed, where text and numbers are distinct keys
     */
    public static Optional<String> conflict(Object value, Kind kind, String column, String type, boolean typedKeys) {
        if (value instanceof String text && kind == Kind.NUMBER) {
            if (typedKeys) {
                return Optional.of("the key '" + text + "' is text, and key column " + column + " (" + type + ") holds "
                        + "numbers: the number " + text + " is another key, whose row it would share");
            }
            if (!canonicalNumber(text)) {
                return Optional.of("the key '" + text + "' is not a number as key column " + column + " (" + type
                        + ") gives it back, so it would share the row of another key (the text of that number)");
            }
        } else if ((value instanceof Number || value instanceof Boolean) && kind == Kind.TEXT && typedKeys) {
            return Optional.of("the key " + value + " is a " + (value instanceof Boolean ? "boolean" : "number")
                    + ", and key column " + column + " (" + type + ") holds text: the text '" + value + "' is another "
                    + "key, whose row it would share");
        }
        return Optional.empty();
    }

    /** Whether {@code text} is a number written as a number column gives it back: no sign but minus, no leading zero. */
    static boolean canonicalNumber(String text) {
        try {
            BigDecimal d = new BigDecimal(text);
            return (d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString()).equals(text);
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
