package dev.kbackfill.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A run under way, told to {@code kbackfill status} on the same machine: while a run reads and writes, a small file
 * in the state directory ({@code $KBACKFILL_STATE_DIR}, else {@code $XDG_STATE_HOME/kbackfill/runs}, else
 * {@code ~/.local/state/kbackfill/runs}) says which run of which job it is, its process, and how far its reader and
 * its commits have got, rewritten at most once a second and deleted when the run ends. The sink holds what is
 * committed; this holds only what a person watching wants to know meanwhile, so a file that cannot be written is
 * no failure of the run.
 */
final class RunBeacon implements AutoCloseable {

    /** A run under way as its beacon says, and how old the news is. */
    record UnderWay(int run, long pid, String host, Instant started, Instant updated, long read, long done,
                    long total, long records) {

        /** Whether the process that wrote it is alive (on this host), or, on another host, it spoke lately. */
        boolean alive(Instant now) {
            if (host.equals(hostName())) {
                return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
            }
            return Duration.between(updated, now).compareTo(Duration.ofMinutes(1)) < 0;
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path file;
    private final ObjectNode state = JSON.createObjectNode();
    private long lastWritten;

    private RunBeacon(Path file, String job, String store, int run) {
        this.file = file;
        state.put("job", job).put("store", store).put("run", run).put("pid", ProcessHandle.current().pid())
                .put("host", hostName()).put("startedAt", Instant.now().toString());
    }

    /** Starts telling about run {@code run} of {@code job} in {@code store}: written now. */
    static RunBeacon start(String job, String store, int run) {
        RunBeacon beacon = new RunBeacon(fileOf(job, store), job, store, run);
        beacon.write(0, 0, -1, 0);
        return beacon;
    }

    /** How far the run has got; written if a second has passed since the last write. */
    synchronized void update(long read, long done, long total, long records) {
        long now = System.nanoTime();
        if (now - lastWritten >= 1_000_000_000L) {
            write(read, done, total, records);
        }
    }

    private void write(long read, long done, long total, long records) {
        lastWritten = System.nanoTime();
        state.put("updatedAt", Instant.now().toString()).put("read", read).put("done", done).put("total", total)
                .put("records", records);
        try {
            Files.createDirectories(file.getParent());
            AtomicFile.replace(file, state.toString());
        } catch (IOException | RuntimeException e) {
            // status says less; the run goes on
        }
    }

    /** The run ended (done, failed or stopped): nothing under way any more. */
    @Override
    public synchronized void close() {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // a stale file names a process that is gone: status ignores it
        }
    }

    /** The run of {@code job} in {@code store} under way now, if a live process says so. */
    static Optional<UnderWay> underWay(String job, String store) {
        Path file = fileOf(job, store);
        try {
            JsonNode n = JSON.readTree(Files.readString(file, StandardCharsets.UTF_8));
            UnderWay u = new UnderWay(n.path("run").asInt(), n.path("pid").asLong(), n.path("host").asText(),
                    Instant.parse(n.path("startedAt").asText()), Instant.parse(n.path("updatedAt").asText()),
                    n.path("read").asLong(), n.path("done").asLong(), n.path("total").asLong(),
                    n.path("records").asLong());
            return u.alive(Instant.now()) ? Optional.of(u) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // none, or half of one: nothing to say
        }
    }

    static Path directory() {
        String dir = System.getenv("KBACKFILL_STATE_DIR");
        if (dir != null && !dir.isBlank()) {
            return Path.of(dir);
        }
        String xdg = System.getenv("XDG_STATE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".local",
                "state");
        return base.resolve("kbackfill").resolve("runs");
    }

    private static Path fileOf(String job, String store) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest((store + "\n" + job)
                    .getBytes(StandardCharsets.UTF_8));
            return directory().resolve(HexFormat.of().formatHex(digest, 0, 12) + ".json");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** This machine's name, without a name lookup (a run's start stays quick). */
    static String hostName() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env.strip();
        }
        try {
            return Files.readString(Path.of("/etc/hostname"), StandardCharsets.UTF_8).strip();
        } catch (IOException | RuntimeException e) {
            return "localhost";
        }
    }
}
