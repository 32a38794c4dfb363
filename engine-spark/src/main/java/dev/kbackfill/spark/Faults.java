package dev.kbackfill.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.spark.SparkEnv;
import org.apache.spark.sql.SparkSession;

/**
 * Faults injected on purpose, for the tests that prove exactly-once across task retries and driver crashes
 * (docs/scale.md). Off unless these Spark settings are given:
 * <ul>
 *   <li>{@value #FAIL_TASK_ONCE}{@code =FILE}: the first task to reach a write point (after
 *       {@value #FAIL_AFTER_ROWS} rows of a partition's sub-job, or while feeding a MERGE) fails, once: FILE marks
 *       that it did;</li>
 *   <li>{@value #HALT_AFTER}{@code =write:N|wave:N}: the driver halts (exit 137, as a SIGKILL) right after wave N's
 *       data is committed, or after the job's progress moved past it.</li>
 * </ul>
 */
final class Faults {

    static final String FAIL_TASK_ONCE = "spark.kbackfill.faults.failTaskOnce";
    static final String FAIL_AFTER_ROWS = "spark.kbackfill.faults.failAfterRows";
    static final String HALT_AFTER = "spark.kbackfill.faults.haltAfter";

    private Faults() {
    }

    /** In a task: how many rows a sub-job is handed before {@link #failTaskOnce} applies; -1 when off (or done). */
    static long failAfterRows() {
        SparkEnv env = SparkEnv.get();
        if (env == null || !env.conf().contains(FAIL_TASK_ONCE) || Files.exists(Path.of(env.conf().get(FAIL_TASK_ONCE)))) {
            return -1;
        }
        return env.conf().getLong(FAIL_AFTER_ROWS, 0);
    }

    /** In a task: fails it if asked to and no task failed so far. */
    static void failTaskOnce(String where) {
        SparkEnv env = SparkEnv.get();
        if (env == null || !env.conf().contains(FAIL_TASK_ONCE)) {
            return;
        }
        try {
            Files.createFile(Path.of(env.conf().get(FAIL_TASK_ONCE)));
        } catch (FileAlreadyExistsException e) {
            return;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("injected task failure (" + FAIL_TASK_ONCE + ") " + where);
    }

    /** On the driver: halts at {@code point} ({@code write:N}, {@code wave:N}) if asked to. */
    static void haltAt(SparkSession spark, String point) {
        if (point.equals(spark.conf().get(HALT_AFTER, ""))) {
            System.err.println("kbackfill: halting after " + point + " (" + HALT_AFTER + ")");
            System.err.flush();
            Runtime.getRuntime().halt(137);
        }
    }
}
