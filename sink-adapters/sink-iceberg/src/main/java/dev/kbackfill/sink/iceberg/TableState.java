package dev.kbackfill.sink.iceberg;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStateJson;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.sink.lake.TombstoneLedger;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * What kbackfill keeps in an Iceberg table besides its rows: each job's state ({@code kbackfill.job.JOB}, its plan and
 * progress) and the tombstone ledger ({@code kbackfill.deletes}: the location of an index file mapping each bucket
 * number to the JSON file that holds it, all under {@code metadata/kbackfill/}). Both are set in the summary of the snapshot that commits the batch, as
 * Iceberg's Kafka Connect sink keeps its offsets, so that they move with the data: a table rolled back to an older
 * snapshot holds that snapshot's progress. They are read from the newest snapshot in the current snapshot's ancestry
 * that holds them.
 *
 * <p>Snapshots expire, and another writer's commits carry nothing of kbackfill's; so that progress and the ledger
 * survive the expiry of the last snapshot kbackfill wrote, the same commit also sets them as table properties, tagged
 * with that snapshot's id. They are read from there only when that snapshot is gone from the table (expired), never
 * when it is still there but no longer an ancestor (the table was rolled back past it).
 */
final class TableState {

    static final String JOB_PREFIX = "kbackfill.job.";
    static final String DELETES = "kbackfill.deletes";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Table table;

    private final Snapshot head;

    /** The state on {@code main}. */
    TableState(Table table) {
        this(table, table.currentSnapshot());
    }

    /** The state as of {@code head}, a branch's head (null: nothing committed there). */
    TableState(Table table, Snapshot head) {
        this.head = head;
        this.table = table;
    }

    static String jobKey(String job) {
        return JOB_PREFIX + job;
    }

    /** The job's stored state, or empty if it never ran against this table or was reset. */
    Optional<JobState> job(String job) {
        return value(jobKey(job)).map(JobStateJson::read);
    }

    /** The jobs whose state the table holds. */
    java.util.List<String> jobs() {
        TreeSet<String> keys = new TreeSet<>();
        Snapshot current = head;
        if (current != null) {
            for (Snapshot s : SnapshotUtil.ancestorsOf(current.snapshotId(), table::snapshot)) {
                s.summary().keySet().stream().filter(k -> k.startsWith(JOB_PREFIX)).forEach(keys::add);
            }
        }
        table.properties().keySet().stream().filter(k -> k.startsWith(JOB_PREFIX)).forEach(keys::add);
        return keys.stream().filter(k -> value(k).isPresent()).map(k -> k.substring(JOB_PREFIX.length())).toList();
    }

    /** The tombstone ledger as the table holds it. */
    TombstoneLedger ledger() {
        Map<Integer, String> files = ledgerFiles();
        return new TombstoneLedger(b -> Optional.ofNullable(files.get(b)).map(this::readFile));
    }

    /** Bucket number to ledger file, as the table holds it. */
    Map<Integer, String> ledgerFiles() {
        Map<Integer, String> files = new TreeMap<>();
        value(DELETES).ifPresent(index -> {
            String json = readFile(index);
            try {
                JSON.readTree(json).fields().forEachRemaining(e -> files.put(Integer.valueOf(e.getKey()), e.getValue().asText()));
            } catch (IOException e) {
                throw new UncheckedIOException("the tombstone ledger's index in " + table.name() + " is not JSON", e);
            }
        });
        return files;
    }

    /**
     * Writes the ledger's changed buckets to new files, then the whole index (bucket to file) to a file of its own, and
     * returns that file's location to commit; empty when no bucket changed. The summary holds one location, not 64.
     */
    Optional<String> writeLedger(TombstoneLedger ledger) {
        Map<Integer, String> changed = ledger.changed();
        if (changed.isEmpty()) {
            return Optional.empty();
        }
        Map<Integer, String> files = ledgerFiles();
        String dir = table.location().replaceAll("/+$", "") + "/metadata/kbackfill/";
        changed.forEach((bucket, json) -> {
            String file = dir + "deletes-" + bucket + "-" + UUID.randomUUID() + ".json";
            try (OutputStream out = table.io().newOutputFile(file).create()) {
                out.write(json.getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException("writing the tombstone ledger of " + table.name() + " to " + file, e);
            }
            files.put(bucket, file);
        });
        ObjectNode index = JSON.createObjectNode();
        files.forEach((b, f) -> index.put(String.valueOf(b), f));
        String file = dir + "deletes-index-" + UUID.randomUUID() + ".json";
        try (OutputStream out = table.io().newOutputFile(file).create()) {
            out.write(index.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("writing the tombstone ledger's index of " + table.name() + " to " + file, e);
        }
        return Optional.of(file);
    }

    /** Sets {@code key} as a table property tagged with the snapshot {@code snapshotId} that holds it. */
    static void setProperty(UpdateProperties update, String key, String value, long snapshotId) {
        if (value.isEmpty()) {
            update.remove(key);
        } else {
            update.set(key, JSON.createObjectNode().put("snapshot", snapshotId).put("value", value).toString());
        }
    }

    private Optional<String> value(String key) {
        Snapshot current = head;
        if (current != null) {
            for (Snapshot s : SnapshotUtil.ancestorsOf(current.snapshotId(), table::snapshot)) {
                String v = s.summary().get(key);
                if (v != null) {
                    return v.isEmpty() ? Optional.empty() : Optional.of(v);
                }
            }
        }
        String tagged = table.properties().get(key);
        if (tagged == null) {
            return Optional.empty();
        }
        try {
            JsonNode t = JSON.readTree(tagged);
            if (table.snapshot(t.path("snapshot").asLong()) != null) {
                return Optional.empty(); // still in the table but not an ancestor: rolled back past it
            }
            return Optional.of(t.path("value").asText());
        } catch (IOException e) {
            throw new UncheckedIOException("table property " + key + " of " + table.name() + " is not kbackfill's JSON", e);
        }
    }

    private String readFile(String file) {
        try (InputStream in = table.io().newInputFile(file).newStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (NotFoundException | java.io.FileNotFoundException e) {
            throw new SinkException("the tombstone ledger file " + file + " of " + table.name() + " is missing (removed "
                    + "by an orphan-file cleanup that did not spare metadata/kbackfill/?); deleted keys could come back, "
                    + "so nothing is written: restore the file, or forget those deletes explicitly with kbackfill compact "
                    + "--forget-deletes-before", e);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the tombstone ledger file " + file + " of " + table.name(), e);
        }
    }
}
