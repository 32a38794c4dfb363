package dev.kbackfill.core.verify;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.PartitionRange;

/**
 * Keys whose last record of the range the target refuses (a value its column cannot hold), judged as a run judges
 * them: a run keeps such a record aside ({@code --on-error skip}, {@code --dead-letter}) and writes the key's newest
 * earlier record that the target takes, read back from the log. So verify looks for that record too, in one more read
 * of the range for all such keys together, and judges the target against it; a key with no record the target takes
 * keeps what the target held before the range, and is counted as refused, not judged.
 *
 * <p>The earlier record is looked for in the refused record's partition (where a key's records are, under Kafka's
 * partitioning by key).
 */
final class RefusedRecords {

    /** A key's refused last record, and the newest earlier one of its partition the target takes, if any. */
    private static final class Refused {
        final Change last;
        Change accepted;

        Refused(Change last) {
            this.last = last;
        }
    }

    private final Map<KeyIdentity, Refused> keys = new HashMap<>();

    boolean isEmpty() {
        return keys.isEmpty();
    }

    void add(Change decodedLast) {
        keys.put(KeyIdentity.of(decodedLast.key()), new Refused(decodedLast));
    }

    int size() {
        return keys.size();
    }

    /**
     * Reads the plan's range once more for the refused keys' earlier records, keeps for each the newest the target
     * takes, and gives each key's record to judge against (the accepted one), or none.
     *
     * @return per refused key, the change a run would have written for it; keys without one are left out
     */
    List<Change> acceptedBefore(Plan plan, Map<String, Object> kafkaConfig, RecordDecoder decoder, TargetLookup target) {
        Map<Integer, Long> lastOffset = new HashMap<>();
        keys.values().forEach(r -> lastOffset.merge(r.last.partition(), r.last.offset(), Math::max));
        List<BoundedReader.Range> ranges = new ArrayList<>();
        for (PartitionRange r : plan.partitions()) {
            if (lastOffset.containsKey(r.partition()) && r.start() < r.end()) {
                ranges.add(new BoundedReader.Range(r.partition(), r.start(), Math.min(r.end(), lastOffset.get(r.partition()))));
            }
        }
        try (BoundedReader reader = new BoundedReader(plan.topic(), kafkaConfig, plan.request().isolationLevel(), ranges,
                true, Duration.ofMinutes(2))) {
            reader.read((records, positions, lost) -> {
                for (SourceRecord record : records) {
                    consider(record, decoder, target);
                }
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the range again for refused records", e);
        }
        List<Change> accepted = new ArrayList<>();
        keys.values().forEach(r -> {
            if (r.accepted != null) {
                accepted.add(r.accepted);
            }
        });
        return accepted;
    }

    /** A record of the range: where it is an earlier record of a refused key that the target takes, the newest yet. */
    private void consider(SourceRecord record, RecordDecoder decoder, TargetLookup target) {
        Change key;
        try {
            key = decoder.decodeKey(record);
        } catch (DecodeException e) {
            return;
        }
        Refused r = keys.get(KeyIdentity.of(key.key()));
        if (r == null || record.partition() != r.last.partition() || record.offset() >= r.last.offset()
                || r.accepted != null && r.accepted.offset() > record.offset()) {
            return;
        }
        try {
            java.util.Optional<Change> kept = decoder.decodeKept(record);
            if (kept.isPresent() && (kept.get().isTombstone() || target.refusal(kept.get()).isEmpty())) {
                r.accepted = kept.get();
            }
        } catch (DecodeException e) {
            // a poison record of its own: a run keeps it aside too
        }
    }
}
