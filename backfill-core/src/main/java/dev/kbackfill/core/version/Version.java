package dev.kbackfill.core.version;

import java.util.Comparator;

/**
 * Where a key's state came from: the source record's topic, partition, offset and timestamp, and its <em>log
 * time</em>. Versions are what reduction and every sink guard compare, by {@link #RULE}, the one version rule of
 * kbackfill (docs/semantics.md). The rule is a strict total order, lexicographic on
 * <ol>
 *   <li>the version field, where the job orders by one ({@link VersionField}: a CDC topic's LSN, an
 *       {@code updated_at}); a version without one is older than every version with one, and two without compare by
 *       what follows;</li>
 *   <li>the log time: the highest record timestamp of the record's partition at or before its offset
 *       ({@link LogClock}), so it never goes down along a log even where producer timestamps do;</li>
 *   <li>then the partition, then the offset, then the topic name in ASCII order (a fixed tie-break).</li>
 * </ol>
 * Along one log the log time never decreases and the offset breaks its ties, so the rule keeps every partition's
 * log order, whatever the timestamps; across logs the later log time wins. Being an order (transitive, total,
 * antisymmetric), it makes the final state of a key the newest of all its records applied, however the records
 * are split into runs and batches and in whatever order those run.
 *
 * <p>A stored version whose topic is unknown ({@code null}: a row written before rows carried their topic) is taken
 * to come from the incoming record's topic.
 *
 * @param topic     the source topic, or null when unknown
 * @param partition the source partition
 * @param offset    the source offset
 * @param timestamp the source record's own timestamp, epoch milliseconds
 * @param logTime   its log time, epoch milliseconds: at least {@code timestamp}
 * @param field     its version field's value ({@link VersionField#valueOf}: a {@link Long} or a {@link String}), or
 *                  null for none
 */
public record Version(String topic, int partition, long offset, long timestamp, long logTime, Comparable<?> field) {

    /** A version without a version field. */
    public Version(String topic, int partition, long offset, long timestamp, long logTime) {
        this(topic, partition, offset, timestamp, logTime, null);
    }

    /** A version whose log time is its timestamp: a record whose partition's earlier records are not known. */
    public Version(String topic, int partition, long offset, long timestamp) {
        this(topic, partition, offset, timestamp, timestamp, null);
    }

    /** The one version rule: orders two versions of the same key, older first. */
    public static final Comparator<Version> RULE = Version::compare;

    /** Compares {@code a} with {@code b}: negative when {@code a} is older, 0 for the same version, positive when newer. */
    public static int compare(Version a, Version b) {
        int c = compareFields(a.field, b.field);
        if (c != 0) {
            return c;
        }
        c = Long.compare(a.logTime, b.logTime);
        if (c != 0) {
            return c;
        }
        c = Integer.compare(a.partition, b.partition);
        if (c != 0) {
            return c;
        }
        c = Long.compare(a.offset, b.offset);
        if (c != 0) {
            return c;
        }
        String topicA = a.topic != null ? a.topic : b.topic;
        String topicB = b.topic != null ? b.topic : a.topic;
        return topicA == null || topicB == null ? 0 : topicA.compareTo(topicB);
    }

    /**
     * Two version fields' order: none is older than any; values of one type by their natural order (whole numbers,
     * or strings by Unicode code point, as SQL's binary collations compare UTF-8); values of two types (which one job
     * never has) by their type's name.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static int compareFields(Comparable<?> a, Comparable<?> b) {
        if (a == null || b == null) {
            return a == null ? (b == null ? 0 : -1) : 1;
        }
        if (a.getClass() != b.getClass()) {
            return a.getClass().getName().compareTo(b.getClass().getName());
        }
        if (a instanceof String x) {
            return compareCodePoints(x, (String) b);
        }
        return Integer.signum(((Comparable) a).compareTo(b));
    }

    private static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb) < 0 ? -1 : 1;
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j) < 0 ? -1 : (a.length() - i == b.length() - j ? 0 : 1);
    }

    /** The newer of two versions by {@link #RULE}; {@code null} stands for none and loses. */
    public static Version newer(Version a, Version b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return compare(a, b) >= 0 ? a : b;
    }

    /**
     * Whether a record of this version replaces a key that holds {@code stored} (absent: nothing stored): only a
     * strictly newer version does. The version a target already holds is kept out, so a replay of the same record
     * writes nothing and re-sends nothing.
     */
    public boolean supersedes(Version stored) {
        return stored == null || compare(this, stored) > 0;
    }

    /**
     * Whether a record of this version replaces what the target holds for its key, under newer-wins: the one rule
     * every sink's guard and verification follow, a foreign row included.
     * <ul>
     *   <li>nothing: it does;</li>
     *   <li>a version kbackfill wrote: only a strictly newer one ({@link #supersedes});</li>
     *   <li>a row another writer wrote ({@link Held.Foreign}), whose version is unknown: where the row holds the
     *       version field in its own column and this record carries the field, by that field alone (the payload
     *       order both writers share; an equal value is the row's own version, kept); otherwise only where
     *       {@code foreign} says the record may replace such a row.</li>
     * </ul>
     *
     * @param foreign what a row of another writer is to a record whose field does not decide
     */
    public boolean replaces(Held held, ForeignRows foreign) {
        if (held instanceof Held.Known k) {
            return supersedes(k.version());
        }
        if (held instanceof Held.Foreign f) {
            if (f.field() != null) {
                return field != null && compareFields(field, f.field()) > 0; // none is older than any
            }
            return foreign.replaced();
        }
        return true; // nothing held
    }

    /**
     * What a row another writer wrote (no version of kbackfill's) is to a record whose version field does not decide
     * ({@link #replaces}).
     */
    public enum ForeignRows {
        /**
         * Left as it is: its version is unknown, and nothing says the record is newer (a run that did not look at
         * the log after its range; another writer's row met where none was expected).
         */
        KEPT,
        /**
         * Replaced: the run looked at the log after the range's end, up to the log's end just before writing, and the
         * record is its key's last there (a run beside a live writer: every record the log shows superseded was
         * left out before the write).
         */
        NEWEST_IN_LOG,
        /** Replaced: the user says no other writer keeps the target current ({@code --live-writer no}). */
        REPLACED;

        /** Whether such a row is replaced. */
        public boolean replaced() {
            return this != KEPT;
        }
    }

    /** Whether the rule placed this record by a log time above its own timestamp (its producer's clock ran behind). */
    public boolean clockBehindLog() {
        return logTime > timestamp;
    }
}
