package dev.kbackfill.core.sink;

import java.util.List;

/**
 * A sink's role for a rebuild published only after verification agrees ({@code run --publish-after-verify}): a
 * shadow of the target that the run writes and verify reads, and the one atomic step that puts the shadow in the
 * target's place. A sink without such a step has no publication ({@link SinkFactory#publication} refuses it).
 */
public interface Publication extends AutoCloseable {

    /** The settings of the shadow: the target's, with the shadow in place of the table. */
    SinkSettings shadow();

    /** The shadow, for people: its table, or where it is. */
    default String shown() {
        return shadow().table();
    }

    /**
     * Makes the shadow ready for the run where it does not exist: created like the target (its columns, keys,
     * indexes and, where the database keeps them by table, grants); nothing where the target does not exist either
     * (the run creates the shadow from the rows, as it would the target). Returns what it did, for people.
     */
    List<String> prepare();

    /** Whether the shadow exists now. */
    boolean shadowExists();

    /**
     * Puts the shadow in the target's place in one atomic step, the target (if any) kept under another name, and
     * forgets {@code job}, whose run built the shadow: a reader sees the old table or the new one, never part of
     * either. Returns what it did, for people.
     *
     * @throws SinkException when the database refuses (nothing was changed then)
     */
    List<String> publish(String job);

    @Override
    void close();
}
