package dev.kbackfill.core.verify;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.read.RecordFetch;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.version.Version;
import org.apache.kafka.common.IsolationLevel;

/**
 * What a target's newer rows claim, checked against the log. A row holding a version newer than the range's last
 * says that the record at that version's partition and offset (of its topic) is its key's, and that it holds what
 * that record gives: verify reads the record and judges the row against it, as it judges the range's own records.
 * A row whose version names a record of another key, one the log never had, or other values than that record's is
 * {@link Verdict#DIFFERENT}; one whose record the log no longer holds is {@link Verdict#UNCONFIRMED}. Only a row that
 * holds exactly its record stays {@link Verdict#NEWER}.
 *
 * <p>Claims are checked a thousand at a time, each read back by its offset ({@link RecordFetch}).
 */
final class NewerClaims implements AutoCloseable {

    /** Claims checked together: their records are fetched, then their rows looked up again in one call. */
    static final int AT_ONCE = 1000;

    /** A key judged newer: the range's last change of it, the row the target holds, and the version it claims. */
    record Claim(Change expected, TargetRow row, Version held) {
    }

    /**
     * What checking a claim found.
     *
     * @param shown   the change to show a person (the newer record where it was read, else the range's)
     * @param row     the row as judged against {@code shown}
     */
    record Outcome(Claim claim, Verdict verdict, Change shown, TargetRow row) {
    }

    private final Map<String, Object> kafkaConfig;
    private final IsolationLevel isolation;
    private final RecordDecoder decoder;
    private final String rangeTopic;
    private final Map<String, RecordFetch> fetches = new HashMap<>();
    private final List<Claim> pending = new ArrayList<>();

    /** The archive the range's topic was archived to, for records retention deleted; or null. */
    private final dev.kbackfill.core.read.archive.ConnectorArchive archive;

    NewerClaims(Map<String, Object> kafkaConfig, IsolationLevel isolation, RecordDecoder decoder, String rangeTopic,
                dev.kbackfill.core.read.archive.ConnectorArchive archive) {
        this.kafkaConfig = kafkaConfig;
        this.isolation = isolation;
        this.decoder = decoder;
        this.rangeTopic = rangeTopic;
        this.archive = archive;
    }

    /**
     * A claimed record below the log start, read from the range's archive where it holds it. The archive's record
     * carries no timestamp where the connector did not store one: the claim's is taken as it stands then.
     */
    private RecordFetch.Found archived(String topic, Version held, RecordFetch.Found found) {
        if (found.where() != RecordFetch.Where.BELOW_LOG_START || archive == null || !topic.equals(rangeTopic)) {
            return found;
        }
        SourceRecord[] hit = {null};
        archive.read(topic, held.partition(), held.offset(), held.offset() + 1, r -> {
            hit[0] = new SourceRecord(topic, held.partition(), r.offset(), r.timestamp() < 0 ? held.timestamp()
                    : r.timestamp(), held.logTime(), r.key(), r.value(), r.headers());
            return false;
        });
        return hit[0] == null ? found : new RecordFetch.Found(RecordFetch.Where.FOUND, hit[0]);
    }

    /** Whether a row judged newer claims a record verify can look for: one a backfill wrote (a source position). */
    static boolean checkable(TargetRow row) {
        Version held = row == null ? null : row.live() ? row.version() : row.deletedAt();
        return held != null && held.partition() >= 0 && held.offset() >= 0;
    }

    void add(Change expected, TargetRow row) {
        pending.add(new Claim(expected, row, row.live() ? row.version() : row.deletedAt()));
    }

    boolean full() {
        return pending.size() >= AT_ONCE;
    }

    /** Checks the claims added since the last call. */
    List<Outcome> check(TargetLookup target) {
        List<Outcome> outcomes = new ArrayList<>();
        Map<String, List<Claim>> readBack = new HashMap<>();
        Map<Claim, Change> newer = new HashMap<>();
        for (Claim c : pending) {
            String topic = topicOf(c.held());
            RecordFetch.Found found;
            try {
                found = archived(topic, c.held(), fetches.computeIfAbsent(topic, t -> new RecordFetch(kafkaConfig,
                        isolation, t)).find(c.held().partition(), c.held().offset(), c.held().logTime()));
            } catch (RuntimeException e) {
                outcomes.add(unlike(c, Verdict.UNCONFIRMED, "topic " + topic + " cannot be read (" + e.getMessage() + ")"));
                continue;
            }
            String at = "partition " + c.held().partition() + " offset " + c.held().offset() + " of " + topic;
            switch (found.where()) {
                case BELOW_LOG_START -> outcomes.add(unlike(c, Verdict.UNCONFIRMED, at + " was deleted (retention)"));
                case NONE -> outcomes.add(unlike(c, Verdict.UNCONFIRMED, at + " holds no record now (compaction)"));
                case BEYOND_END -> outcomes.add(unlike(c, Verdict.DIFFERENT, at + " lies beyond the log's end"));
                case FOUND -> {
                    String wrong = null;
                    Change n = null;
                    try {
                        n = decoder.decode(found.record());
                    } catch (DecodeException e) {
                        wrong = at + " cannot be decoded";
                    }
                    if (n != null && !KeyIdentity.of(n.key()).equals(KeyIdentity.of(c.expected().key()))) {
                        wrong = at + " is a record of key " + KeyIdentity.of(n.key());
                    } else if (n != null && n.timestamp() != c.held().timestamp()) {
                        wrong = at + " has the timestamp " + java.time.Instant.ofEpochMilli(n.timestamp());
                    } else if (n != null && n.isTombstone() == c.row().live()) {
                        wrong = at + " is " + (n.isTombstone() ? "a delete" : "a value");
                    }
                    if (wrong != null) {
                        outcomes.add(unlike(c, Verdict.DIFFERENT, wrong));
                    } else {
                        // a delete's version field is its nearest earlier record's: taken as claimed
                        newer.put(c, n.isTombstone() ? n.withVersionField(c.held().field()) : n);
                        readBack.computeIfAbsent(topic, t -> new ArrayList<>()).add(c);
                    }
                }
            }
        }
        readBack.forEach((topic, claims) -> {
            List<Change> records = claims.stream().map(newer::get).toList();
            Map<KeyIdentity, TargetRow> rows = target.lookup(records, topic, Change::values);
            for (Claim c : claims) {
                Change n = newer.get(c);
                TargetRow row = rows.get(KeyIdentity.of(n.key()));
                Verdict v = Verdict.judge(n, Verification.version(n, topic), row);
                outcomes.add(new Outcome(c, v == Verdict.MATCHING ? Verdict.NEWER : Verdict.DIFFERENT, n, row));
            }
        });
        pending.clear();
        return outcomes;
    }

    private String topicOf(Version held) {
        return held.topic() == null || held.topic().isEmpty() ? rangeTopic : held.topic();
    }

    /** A claim the log does not bear out, said in the row's differing fields for people. */
    private static Outcome unlike(Claim c, Verdict v, String why) {
        TargetRow r = c.row();
        List<String> differing = new ArrayList<>(r.differing());
        differing.add("version (" + why + ")");
        return new Outcome(c, v, c.expected(), new TargetRow(r.live(), r.version(), r.deletedAt(), r.values(), differing,
                r.duplicated()));
    }

    @Override
    public void close() {
        fetches.values().forEach(RecordFetch::close);
    }
}
