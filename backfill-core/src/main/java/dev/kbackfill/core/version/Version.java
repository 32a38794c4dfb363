package dev.kbackfill.core.version;

import java.util.Comparator;
import java.util.Objects;

/**
 * Where a key's state came from: the source record's topic, partition, offset and timestamp. Versions are what
 * reduction and every sink guard compare, by {@link #RULE}, the one version rule of kbackfill (docs/semantics.md):
 * <ol>
 *   <li>the same topic and partition (one log): the higher offset is newer;</li>
 *   <li>otherwise (another partition, another topic): the later record timestamp is newer;</li>
 *   <li>equal timestamps: a fixed tie-break, the higher partition, then the higher offset, then the topic name
 *       later in ASCII order (topic names are ASCII); so that the outcome never depends on the order records arrive in.</li>
 * </ol>
 * A stored version whose topic is unknown ({@code null}: a row written before rows carried their topic) is taken to
 * come from the incoming record's topic.
 *
 * <p>Within one log the rule is exact. Across logs it trusts producer clocks: a producer whose clock runs behind
 * writes records that lose to older ones from another partition.
 *
 * @param topic     the source topic, or null when unknown
 * @param partition the source partition
 * @param offset    the source offset
 * @param timestamp the source timestamp, epoch milliseconds
 */
public record Version(String topic, int partition, long offset, long timestamp) {

    /** The one version rule: orders two versions of the same key, older first. */
    public static final Comparator<Version> RULE = Version::compare;

    /** Compares {@code a} with {@code b}: negative when {@code a} is older, 0 for the same version, positive when newer. */
    public static int compare(Version a, Version b) {
        String topicA = a.topic != null ? a.topic : b.topic;
        String topicB = b.topic != null ? b.topic : a.topic;
        if (a.partition == b.partition && Objects.equals(topicA, topicB)) {
            return Long.compare(a.offset, b.offset);
        }
        int c = Long.compare(a.timestamp, b.timestamp);
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
        return topicA == null || topicB == null ? 0 : topicA.compareTo(topicB);
    }

    /**
     * Whether a record of this version replaces a key that holds {@code stored} (absent: nothing stored). The same
     * version replaces itself: a replay of the same record rewrites the same row, harmlessly.
     */
    public boolean supersedes(Version stored) {
        return stored == null || compare(this, stored) >= 0;
    }
}
