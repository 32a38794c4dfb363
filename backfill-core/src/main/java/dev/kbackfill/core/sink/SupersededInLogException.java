package dev.kbackfill.core.sink;

import java.util.List;

import dev.kbackfill.core.record.Change;

/**
 * A batch's changes that a newer record of the log supersedes now, found by the sink just before it would have
 * committed them ({@link WriteBatch#recheckBeforeCommit}): a live writer may have applied that record since the run
 * looked. Nothing of the batch was committed; the run writes it again without them.
 */
public final class SupersededInLogException extends RuntimeException {

    private final transient List<Change> changes;

    public SupersededInLogException(List<Change> changes) {
        super(changes.size() + " change(s) of the batch are superseded in the log now");
        this.changes = List.copyOf(changes);
    }

    /** The changes to leave out. */
    public List<Change> changes() {
        return changes;
    }
}
