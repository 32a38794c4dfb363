package dev.kbackfill.resolver;

import java.util.Objects;

/**
 * Why a range is not simply what was asked: every adjustment the resolver makes, and every property of the
 * topic that changes what a time bound means, is recorded as a note. Nothing is applied silently.
 *
 * @param kind    what happened, for programs
 * @param message what happened, for people: the values involved and what it means for the backfill, the request's
 *                settings named in {@link Wording#current()} words (or others: {@link #message(Wording)})
 */
public record Note(Kind kind, String message) {

    public Note {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(message, "message");
    }

    /** What happened, in {@link Wording#current()} words. */
    @Override
    public String message() {
        return Wording.current().render(message);
    }

    /** What happened, the request's settings named in {@code wording}. */
    public String message(Wording wording) {
        return wording.render(message);
    }

    /** Equal notes say the same in {@link Wording#current()} words: a note read back from a plan's JSON is the note written. */
    @Override
    public boolean equals(Object o) {
        return o instanceof Note n && kind == n.kind && message().equals(n.message());
    }

    @Override
    public int hashCode() {
        return 31 * kind.hashCode() + message().hashCode();
    }

    @Override
    public String toString() {
        return "Note[kind=" + kind + ", message=" + message() + "]";
    }

    /** The closed set of adjustments and warnings. */
    public enum Kind {
        /** No record at or after the {@code from} time: the range is empty at the end offset. */
        NO_RECORD_AT_OR_AFTER_FROM,
        /** No record at or after the {@code to} time: the range runs to the end offset of the snapshot. */
        NO_RECORD_AT_OR_AFTER_TO,
        /** The partition holds no records at all (log start = end). */
        EMPTY_PARTITION,
        /** The requested start lies below the log start: records were deleted; clamped (loss allowed). */
        START_LOST_TO_RETENTION,
        /** The requested end lies below the log start: the whole range was deleted; empty (loss allowed). */
        END_LOST_TO_RETENTION,
        /**
         * ListOffsets answered an offset no reader sees (a transaction marker, stamped with the broker's clock, or
         * an aborted record); the range uses the first record a reader sees at or after the time instead.
         */
        TIME_LOOKUP_HIT_INVISIBLE,
        /** The {@code from} time is older than the first retained record, and earlier records were deleted. */
        RANGE_OLDER_THAN_RETAINED,
        /** An offset bound lies beyond the end offset of the snapshot; clamped to it. */
        OFFSET_BEYOND_END,
        /** Bounds of different kinds put the start after the end on this partition: the range is empty. */
        FROM_AFTER_TO,
        /** An open transaction holds the last stable offset (the end under read_committed) below the high watermark. */
        OPEN_TRANSACTION,
        /** The topic uses LogAppendTime: time bounds select by when the broker appended records. */
        LOG_APPEND_TIME,
        /** The topic uses CreateTime: producer timestamps may be out of offset order. */
        CREATE_TIME,
        /** The topic is compacted: superseded values are gone and old tombstones may be too. */
        COMPACTED_TOPIC,
        /**
         * A bound read from another reader's positions (a Spark checkpoint, a consumer group): where a partition's
         * offset came from, and what the reader's state says beside it (a planned batch not committed, batches
         * purged, other topics read, a partition it has no position for).
         */
        READER_POSITION,
        /**
         * Part of the range lies in tiered (remote) storage, below the first offset the broker keeps on local disk:
         * the broker reads it from the remote store for the reader.
         */
        REMOTE_STORAGE,
        /**
         * Part of the range is read from the topic's archive ({@link Archive}): which offsets come from it and which
         * from the topic, where they meet (the log start at plan time), and an overlap read once, from the topic.
         */
        ARCHIVED,
        /**
         * Offsets of the range are in neither the archive nor the topic (the archive ends below the log start):
         * records lost for good; planned only where data loss is allowed.
         */
        ARCHIVE_HOLE;

        /** A short lower-case label for tables, e.g. {@code open-transaction}. */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }
}
