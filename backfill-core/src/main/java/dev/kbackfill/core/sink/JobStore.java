package dev.kbackfill.core.sink;

import java.util.Optional;

/**
 * Where a destination keeps the state of its jobs (plan, progress, the run's identity), beside the data: the lock
 * that makes a job's runs exclusive, the state a run begins and moves, and what {@code status}, {@code reset} and
 * {@code jobs} read and forget. Every sink has one ({@link Sink#jobStore()}); a command that only administers jobs
 * asks for this role ({@link SinkFactory#jobStore}).
 */
public interface JobStore extends AutoCloseable {

    /**
     * The store that holds the job's state, for people, without credentials: where a job is looked for by name (a
     * database's URL, without the table a sink's target adds; a lake table; a topic at its cluster).
     */
    String store();

    /**
     * The destination, as the store that holds the job's state names it: the qualified table of a
     * database, the path of a Delta table, the target topic. Part of a job's {@link JobSpec}: a job is bound to one
     * destination.
     */
    String destination();

    /**
     * Whether two destinations as jobs store them ({@link #destination()}) are one: a database resolves
     * {@code public.orders}, {@code orders} and {@code ORDERS} to one table, so a job is found however its table was
     * spelled. By default, equal text.
     */
    default boolean sameDestination(String a, String b) {
        return a.equals(b);
    }


    /**
     * Connects for job administration only ({@code status}, {@code reset}): the job state must be reachable, the
     * data table need not exist.
     */
    void openForJobs();

    /**
     * Whether {@link #begin} stores a job's state in the sink now. Not for a lake table not created yet (its first
     * commit stores the state), nor for a Delta table whose features only an engine's writer can commit to (the Spark
     * engine's driver stores it there): the sink holds a state begun meanwhile.
     */
    default boolean storesStatesHere() {
        return true;
    }

    /**
     * Takes the job's exclusive lock, held until the returned handle is closed or the process dies.
     *
     * @throws JobConflictException if another run holds it
     */
    AutoCloseable lock(String job);

    /**
     * Joins the lock that a launching process holds for {@code job} on this process's behalf (an engine's driver
     * under {@code kbackfill run --engine spark}, which holds {@link #lock(String)} while the engine runs): where
     * the lock excludes other runs (a database lock, a file lock) nothing is taken here, the launch holds it; a sink
     * whose lock is its writer's identity (a topic's transactional id) takes that identity over, fencing the
     * launch's idle writer.
     */
    default AutoCloseable joinLock(String job) {
        return () -> { };
    }

    /** The job's stored state, or empty if it never ran against this destination (or was reset). */
    Optional<JobState> load(String job);

    /**
     * The stored states of several jobs (an engine's sub-jobs) at once, by name; a job with none is left out. A
     * sink that reads all its jobs to find one (a topic) reads them once here.
     */
    default java.util.Map<String, JobState> loadAll(java.util.Collection<String> jobs) {
        java.util.Map<String, JobState> states = new java.util.HashMap<>();
        for (String job : jobs) {
            load(job).ifPresent(s -> states.put(job, s));
        }
        return states;
    }

    /** Stores a new run of the job (its plan and start offsets), replacing any earlier run's state. */
    void begin(JobState state);

    /**
     * Whether the store of job state this sink uses is shared by other destinations (a cluster's job topic holds the
     * jobs of every target topic): {@code kbackfill jobs} then lists this destination's jobs unless asked for all.
     */
    default boolean sharesJobStore() {
        return false;
    }

    /**
     * The names of the jobs whose state this sink holds ({@code kbackfill jobs}), sorted. Call after
     * {@link #openForJobs()}.
     */
    default java.util.List<String> jobs() {
        throw new SinkConfigException("this sink cannot list its jobs");
    }

    /** Forgets the job's plan and progress (not the rows written); returns whether there was a job. */
    boolean reset(String job);

    /**
     * Forgets a job this process began ({@link #begin}) whose first run failed before anything of it committed, and
     * what that begin created in the destination where the store can tell (job tables, a database file): a refused
     * first run leaves the destination as it found it. By default {@link #reset}.
     */
    default void withdraw(String job) {
        reset(job);
    }

    @Override
    void close();
}
