package dev.kbackfill.core.sink;

/** A destination's upkeep, never part of a run: what {@code kbackfill compact} asks of a sink ({@link Sink#maintenance()}). */
public interface Maintenance {

    /**
     * Prunes the tombstone ledger: forgets the versions of keys whose deletes were recorded before {@code before} (by
     * when kbackfill recorded them: a back-dated tombstone is not forgotten at once), so that a later replay of
     * records older than those deletes could bring such keys back. Only ever explicit
     * ({@code kbackfill compact --forget-deletes-before}). Call after {@link JobStore#openForJobs()}.
     *
     * @return how many deleted keys were forgotten
     */
    long forgetDeletesBefore(java.time.Instant before);
}
