package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.JobSpec;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStateJson;
import dev.kbackfill.resolver.Plan;

/**
 * The job and progress tables, kept in the target database beside the data and updated in the same transaction
 * as every batch:
 * <pre>
 * kbackfill_jobs(job PK, fingerprint, run_number, target_table, plan, created_at, updated_at, job_spec, incarnation)
 * kbackfill_progress(job, partition_id, next_offset, end_offset; PK(job, partition_id))
 * </pre>
 * A job name is bound to one target table: {@code job_spec} holds the {@link JobSpec} (JSON), its destination
 * among its parts. Job tables created before {@code job_spec} existed get the column on open; their rows have a
 * null spec and are read as a spec of their target table alone.
 */
final class JobTables {

    private final Dialect d;
    private final TableName jobsName;
    private final String jobs;
    private final String progress;

    JobTables(Dialect dialect, TableName target) {
        this.d = dialect;
        this.jobsName = target.sibling("kbackfill_jobs");
        this.jobs = jobsName.quoted(dialect);
        this.progress = target.sibling("kbackfill_progress").quoted(dialect);
    }

    /** Whether the job tables exist (a database no job ran against has none). */
    boolean exists(Connection c) throws SQLException {
        return TargetTable.read(c, jobsName).isPresent();
    }

    /** Creates the job tables where missing, and adds what an earlier version's lack. */
    void create(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + jobs + " (job " + d.nameType(200) + " NOT NULL PRIMARY KEY, "
                    + "fingerprint VARCHAR(64) NOT NULL, run_number INTEGER NOT NULL, target_table VARCHAR(400) NOT NULL, "
                    + "plan " + d.textType() + " NOT NULL, created_at VARCHAR(40) NOT NULL, updated_at VARCHAR(40) NOT NULL)");
            s.execute("CREATE TABLE IF NOT EXISTS " + progress + " (job " + d.nameType(200) + " NOT NULL, "
                    + "partition_id INTEGER NOT NULL, next_offset BIGINT NOT NULL, end_offset BIGINT NOT NULL, "
                    + "PRIMARY KEY (job, partition_id))");
            if (TargetTable.read(c, jobsName).flatMap(t -> t.column("job_spec")).isEmpty()) {
                s.execute("ALTER TABLE " + jobs + " ADD COLUMN job_spec " + d.textType());
            }
            if (TargetTable.read(c, jobsName).flatMap(t -> t.column("incarnation")).isEmpty()) {
                s.execute("ALTER TABLE " + jobs + " ADD COLUMN incarnation VARCHAR(40)");
            }
        }
    }

    /** Drops the job tables (emptied: a refused first run's begin created them). */
    void drop(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("DROP TABLE " + progress);
            s.execute("DROP TABLE " + jobs);
        }
    }

    /** Every job with state here, sorted. */
    java.util.List<String> names(Connection c) throws SQLException {
        java.util.List<String> names = new java.util.ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT job FROM " + jobs + " ORDER BY job");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                names.add(rs.getString(1));
            }
        }
        return names;
    }

    Optional<JobState> load(Connection c, String job) throws SQLException {
        String fingerprint;
        int run;
        String planJson;
        JobSpec spec;
        String incarnation;
        try (PreparedStatement ps = c.prepareStatement("SELECT fingerprint, run_number, plan, target_table, job_spec, "
                + "incarnation FROM " + jobs + " WHERE job = ?")) {
            ps.setString(1, job);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                fingerprint = rs.getString(1);
                run = rs.getInt(2);
                planJson = rs.getString(3);
                String specJson = rs.getString(5);
                spec = specJson != null ? JobStateJson.readSpec(specJson)
                        : new JobSpec(Map.of(JobSpec.DESTINATION, "table " + rs.getString(4)));
                incarnation = rs.getString(6) == null ? "" : rs.getString(6);
            }
        }
        Map<Integer, Long> next = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT partition_id, next_offset FROM " + progress
                + " WHERE job = ?")) {
            ps.setString(1, job);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    next.put(rs.getInt(1), rs.getLong(2));
                }
            }
        }
        return Optional.of(new JobState(job, fingerprint, run, Plan.fromJson(planJson), next, spec, incarnation));
    }

    /** Replaces the job's row and progress with a new run's; the caller commits. */
    void begin(Connection c, JobState state, String target) throws SQLException {
        delete(c, state.job());
        String now = Instant.now().toString();
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + jobs
                + " (job, fingerprint, run_number, target_table, plan, created_at, updated_at, job_spec, incarnation) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, state.job());
            ps.setString(2, state.fingerprint());
            ps.setInt(3, state.run());
            ps.setString(4, target);
            ps.setString(5, state.plan().toJson());
            ps.setString(6, now);
            ps.setString(7, now);
            ps.setString(8, state.spec().isKnown() ? JobStateJson.writeSpec(state.spec()) : null);
            ps.setString(9, state.incarnation().isEmpty() ? null : state.incarnation());
            ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + progress
                + " (job, partition_id, next_offset, end_offset) VALUES (?, ?, ?, ?)")) {
            for (var r : state.plan().partitions()) {
                ps.setString(1, state.job());
                ps.setInt(2, r.partition());
                ps.setLong(3, state.next(r));
                ps.setLong(4, r.end());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Moves progress forward inside the batch's transaction; the caller commits. */
    void advance(Connection c, String job, int run, Map<Integer, Long> nextOffsets) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + progress
                + " SET next_offset = ? WHERE job = ? AND partition_id = ? AND next_offset <= ?")) {
            for (Map.Entry<Integer, Long> e : nextOffsets.entrySet()) {
                ps.setLong(1, e.getValue());
                ps.setString(2, job);
                ps.setInt(3, e.getKey());
                ps.setLong(4, e.getValue());
                ps.addBatch();
            }
            ps.executeBatch();
        }
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + jobs + " SET updated_at = ? WHERE job = ? AND run_number = ?")) {
            ps.setString(1, Instant.now().toString());
            ps.setString(2, job);
            ps.setInt(3, run);
            if (ps.executeUpdate() != 1) {
                throw new SQLException("job " + job + " run " + run + " is no longer stored (reset by another process?)");
            }
        }
    }

    boolean delete(Connection c, String job) throws SQLException {
        int n;
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + progress + " WHERE job = ?")) {
            ps.setString(1, job);
            ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + jobs + " WHERE job = ?")) {
            ps.setString(1, job);
            n = ps.executeUpdate();
        }
        return n > 0;
    }
}
