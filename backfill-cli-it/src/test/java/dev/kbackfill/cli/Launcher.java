package dev.kbackfill.cli;

import java.nio.file.Path;
import java.util.Optional;

import dev.kbackfill.core.sink.JobState;

/** The command line as a process of its own (killed with SIGKILL by tests), and a SQLite job's stored state. */
final class Launcher {

    private static final Path LAUNCHER = Path.of("..", "bin", "kbackfill").toAbsolutePath().normalize();

    private Launcher() {
    }

    /** Starts {@code bin/kbackfill ARGS}, its output in {@code dir}/{@code name}.out and .err. */
    static Process start(String[] args, Path dir, String name) throws java.io.IOException {
        return start(args, dir, name, java.util.Map.of());
    }

    /** {@link #start} with {@code env} added to the process's environment. */
    static Process start(String[] args, Path dir, String name, java.util.Map<String, String> env)
            throws java.io.IOException {
        String[] command = new String[args.length + 1];
        command[0] = LAUNCHER.toString();
        System.arraycopy(args, 0, command, 1, args.length);
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(dir.resolve(name + ".out").toFile())
                .redirectError(dir.resolve(name + ".err").toFile());
        builder.environment().putAll(env);
        return builder.start();
    }

    /** What a command printed and how it exited. */
    record Result(int exitCode, String out, String err) {
    }

    /** Runs {@code command} (any program) with {@code env} added to this JVM's environment, for at most 120 s. */
    static Result run(java.util.List<String> command, java.util.Map<String, String> env)
            throws java.io.IOException, InterruptedException {
        Path out = java.nio.file.Files.createTempFile("kbackfill-out", ".txt");
        Path err = java.nio.file.Files.createTempFile("kbackfill-err", ".txt");
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile())
                    .redirectError(err.toFile());
            builder.environment().putAll(env);
            Process p = builder.start();
            if (!p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " did not finish in 120 s");
            }
            return new Result(p.exitValue(), java.nio.file.Files.readString(out), java.nio.file.Files.readString(err));
        } finally {
            java.nio.file.Files.deleteIfExists(out);
            java.nio.file.Files.deleteIfExists(err);
        }
    }

    /** {@code bin/kbackfill ARGS}, waited for ({@link #run}). */
    static Result launch(java.util.Map<String, String> env, String... args)
            throws java.io.IOException, InterruptedException {
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(LAUNCHER.toString()));
        command.addAll(java.util.List.of(args));
        return run(command, env);
    }

    /** The job's state as the sink at {@code url} (table orders) stores it, read through the sink as status does. */
    static Optional<JobState> state(String url, String job) {
        try (dev.kbackfill.core.sink.Sink sink = dev.kbackfill.core.sink.SinkFactory.forSettings(
                new dev.kbackfill.core.sink.SinkSettings(url, "orders", Optional.empty(), Optional.empty(),
                        dev.kbackfill.core.sink.ConflictMode.NEWER_WINS, dev.kbackfill.core.sink.TombstoneMode.DELETE,
                        true, false, dev.kbackfill.core.sink.SinkSettings.MetadataColumns.DEFAULT))) {
            sink.jobStore().openForJobs();
            return sink.jobStore().load(job);
        } catch (RuntimeException e) {
            return Optional.empty(); // not created yet
        }
    }

    /** The offsets the job has committed, summed over its partitions. */
    static long progress(String url, String job) {
        return state(url, job).map(s -> s.nextOffsets().values().stream().mapToLong(Long::longValue).sum()).orElse(0L);
    }
}
