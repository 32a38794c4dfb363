package dev.kbackfill.sink.delta;

import dev.kbackfill.sink.lake.TombstoneLedger;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Transaction;

/**
 * The tombstone ledger of a Delta table, in the table's own log: bucket {@code N} is the domain metadata
 * {@code kbackfill.deletes.N}, written in the same commit as the deletes; Delta readers that do not know the domains
 * ignore them.
 */
final class DeltaTombstones extends TombstoneLedger {

    /** The domains of the ledger's buckets begin so. */
    static final String PREFIX = "kbackfill.deletes.";

    DeltaTombstones(Snapshot snapshot) {
        super(b -> snapshot.getDomainMetadata(PREFIX + b));
    }

    /** The changed buckets as the domains to commit (name to configuration). */
    java.util.Map<String, String> domains() {
        java.util.Map<String, String> domains = new java.util.TreeMap<>();
        changed().forEach((b, json) -> domains.put(PREFIX + b, json));
        return domains;
    }

    /** Adds the changed buckets to the commit. */
    void addTo(Transaction txn) {
        changed().forEach((b, json) -> txn.addDomainMetadata(PREFIX + b, json));
    }
}
