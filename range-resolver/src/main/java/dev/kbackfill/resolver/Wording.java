package dev.kbackfill.resolver;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the settings of a request are called in the resolver's messages and notes. A library caller sets them
 * through {@link BackfillRequest.Builder} and reads about them in those words ({@code invalid from bound
 * 'yesterday'}, {@code pass allowDataLoss(true)}); a program with its own names for them (the command line's
 * {@code --from}, {@code --allow-data-loss}) says so once, at its start, with {@link #use(Wording)}, as a program sets
 * its default locale.
 *
 * <p>Messages are written with {@link Term}s in place of names and rendered when read: {@link RequestException},
 * {@link ResolutionException} and {@link Note} render in {@link #current()} words, or in any other with their
 * {@code message(Wording)}. A plan's JSON holds its notes in the words of the program that wrote it.
 */
public final class Wording {

    private static final char OPEN = '\uE000';
    private static final char CLOSE = '\uE001';
    private static final Pattern TERM = Pattern.compile(OPEN + "([A-Z_]+)" + CLOSE);

    /** A setting of the request that messages name. Its {@code toString()} is its place in a message. */
    public enum Term {
        /** {@link BackfillRequest.Builder#builder}'s topic. */
        TOPIC("topic"),
        /** {@link BackfillRequest.Builder#from}. */
        FROM("from bound"),
        /** {@link BackfillRequest.Builder#to}. */
        TO("to bound"),
        /** {@link BackfillRequest.Builder#zone}. */
        ZONE("zone"),
        /** {@link BackfillRequest.Builder#partitions}. */
        PARTITIONS("partitions"),
        /** {@link BackfillRequest.Builder#allowDataLoss}, as an instruction. */
        ALLOW_DATA_LOSS("allowDataLoss(true)"),
        /** A setting of {@link BackfillRequest.Builder#readers} (a checkpoint's filesystem). */
        READER_SETTING("reader setting"),
        /** The {@value BackfillRequest#CONNECT_URL} reader setting. */
        CONNECT_URL("reader setting " + BackfillRequest.CONNECT_URL),
        /** {@link BackfillRequest.Builder#archive}. */
        ARCHIVE("archive"),
        /** {@link BackfillRequest.Builder#allowInferredOffsets}, as an instruction. */
        ALLOW_INFERRED_OFFSETS("allowInferredOffsets(true)"),
        /** {@link BackfillRequest.Builder#archiveFields}. */
        ARCHIVE_FIELDS("archiveFields"),
        /** The Kafka client's bootstrap servers. */
        BOOTSTRAP_SERVERS("bootstrap.servers");

        private final String libraryName;

        Term(String libraryName) {
            this.libraryName = libraryName;
        }

        /** The term's place in a message, rendered when the message is read. */
        @Override
        public String toString() {
            return OPEN + name() + CLOSE;
        }
    }

    /** The words of the resolver's own API: the default. */
    public static final Wording LIBRARY = of(libraryNames());

    private static volatile Wording current = LIBRARY;

    private final Map<Term, String> names;

    private Wording(Map<Term, String> names) {
        this.names = names;
    }

    /**
     * A wording that names each term as {@code names} says, and any term it leaves out in the library's words.
     *
     * @throws IllegalArgumentException for a blank name
     */
    public static Wording of(Map<Term, String> names) {
        Map<Term, String> all = new EnumMap<>(libraryNames());
        names.forEach((t, n) -> {
            if (n == null || n.isBlank()) {
                throw new IllegalArgumentException("blank name for " + t.name());
            }
            all.put(Objects.requireNonNull(t), n);
        });
        return new Wording(java.util.Collections.unmodifiableMap(all));
    }

    private static Map<Term, String> libraryNames() {
        Map<Term, String> m = new EnumMap<>(Term.class);
        for (Term t : Term.values()) {
            m.put(t, t.libraryName);
        }
        return m;
    }

    /** The words messages and notes are rendered in unless asked otherwise: {@link #LIBRARY} until {@link #use}. */
    public static Wording current() {
        return current;
    }

    /** Makes {@code wording} the words of this program's messages and notes, from now on. */
    public static void use(Wording wording) {
        current = Objects.requireNonNull(wording, "wording");
    }

    /** What this wording calls {@code term}. */
    public String name(Term term) {
        return names.get(term);
    }

    /** Every term's name. */
    public Map<Term, String> names() {
        return names;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Wording w && names.equals(w.names);
    }

    @Override
    public int hashCode() {
        return names.hashCode();
    }

    @Override
    public String toString() {
        return "Wording" + names;
    }

    /** {@code text} with each term in this wording's words; text without terms as it is. */
    public String render(String text) {
        if (text == null || text.indexOf(OPEN) < 0) {
            return text;
        }
        Matcher m = TERM.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String name;
            try {
                name = names.get(Term.valueOf(m.group(1)));
            } catch (IllegalArgumentException e) {
                name = m.group(1).toLowerCase(java.util.Locale.ROOT);
            }
            m.appendReplacement(out, Matcher.quoteReplacement(name));
        }
        m.appendTail(out);
        return out.toString();
    }
}
