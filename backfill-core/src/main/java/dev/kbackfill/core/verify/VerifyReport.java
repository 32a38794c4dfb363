package dev.kbackfill.core.verify;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.version.Version;

/**
 * What a verification found: per {@link Verdict} how many keys, and up to a number of samples each.
 *
 * @param topic       the range's topic
 * @param counts      keys per class (every class present, zero where none)
 * @param samples     up to the asked number of keys per class other than {@link Verdict#MATCHING}
 * @param read        records of the range read
 * @param filtered    records left out as a run leaves them out (outside the time window under strict time,
 *                    tombstones under {@code --on-tombstone ignore})
 * @param rejected    records that cannot be decoded: not judged (a run fails on them, skips them or keeps them aside)
 * @param lost        records of the range no longer in the topic (retention): not judged
 * @param rowsRead    rows or records read from the target
 * @param spilled     whether the range's keys outgrew memory and were folded on disk, bucket by bucket
 * @param elapsed     how long it took
 */
public record VerifyReport(String topic, Map<Verdict, Long> counts, Map<Verdict, List<Sample>> samples, long read,
                           long filtered, long rejected, long lost, long rowsRead, boolean spilled, Duration elapsed) {

    public VerifyReport {
        Map<Verdict, Long> all = new EnumMap<>(Verdict.class);
        for (Verdict v : Verdict.values()) {
            all.put(v, counts.getOrDefault(v, 0L));
        }
        counts = java.util.Collections.unmodifiableMap(all);
        Map<Verdict, List<Sample>> s = new EnumMap<>(Verdict.class);
        samples.forEach((v, list) -> s.put(v, List.copyOf(list)));
        samples = java.util.Collections.unmodifiableMap(s);
    }

    /**
     * One judged key.
     *
     * @param key        the key, as field=value pairs, for people
     * @param keyFields  the key's fields with their typed values (text, numbers, bytes as they came), for programs
     * @param verdict    its class
     * @param partition  the source partition of the range's final record of the key
     * @param offset     its offset
     * @param timestamp  its timestamp, epoch milliseconds
     * @param tombstone  whether that record is a delete
     * @param expected   its values (empty for a delete)
     * @param held       the version the target holds (a delete's where it holds one), or null for none
     * @param target     the target's values (empty where it has no row, or keeps none readable)
     * @param differing  the fields whose values differ
     */
    public record Sample(String key, Verdict verdict, int partition, long offset, long timestamp, boolean tombstone,
                         Map<String, Object> expected, Version held, Map<String, Object> target,
                         List<String> differing, Map<String, Object> keyFields) {
        public Sample {
            keyFields = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(keyFields));
        }
    }

    /** Keys judged. */
    public long keys() {
        return counts.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Keys in classes that disagree ({@link Verdict#disagrees()}). */
    public long disagreeing() {
        return counts.entrySet().stream().filter(e -> e.getKey().disagrees()).mapToLong(Map.Entry::getValue).sum();
    }

    /** Whether the target holds the final state of every judged key (newer versions allowed). */
    public boolean agrees() {
        return disagreeing() == 0;
    }

    public long count(Verdict v) {
        return counts.get(v);
    }
}
