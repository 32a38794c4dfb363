package dev.kbackfill.sink.jdbc;

/**
 * The newer-wins guard: the stored row is replaced only when the incoming record is not older. Same partition:
 * the incoming offset is at least the stored one. Another partition: the incoming timestamp is at least the
 * stored one. A row without metadata (not written by a backfill) is replaced.
 *
 * @param partition the partition column
 * @param offset    the offset column
 * @param timestamp the timestamp column
 */
record Guard(String partition, String offset, String timestamp) {

    /**
     * The guard as SQL, comparing the stored row (columns qualified by {@code stored}, may be empty) with the
     * incoming one (qualified by {@code incoming}, e.g. {@code EXCLUDED.}, or wrapped as {@code VALUES(%s)}).
     */
    String sql(Dialect d, String stored, String incomingFormat) {
        String sp = stored + d.quote(partition);
        String so = stored + d.quote(offset);
        String st = stored + d.quote(timestamp);
        String ip = String.format(incomingFormat, d.quote(partition));
        String io = String.format(incomingFormat, d.quote(offset));
        String it = String.format(incomingFormat, d.quote(timestamp));
        return "(" + so + " IS NULL OR (" + sp + " = " + ip + " AND " + so + " <= " + io + ") OR (" + sp + " <> " + ip
                + " AND " + st + " <= " + it + "))";
    }

    /** The guard against bound parameters: partition, offset, partition, timestamp. */
    String againstParameters(Dialect d) {
        return "(" + d.quote(offset) + " IS NULL OR (" + d.quote(partition) + " = ? AND " + d.quote(offset)
                + " <= ?) OR (" + d.quote(partition) + " <> ? AND " + d.quote(timestamp) + " <= ?))";
    }
}
