package dev.kbackfill.core.engine;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.run.PartitionStats;
import dev.kbackfill.core.run.RunSummary;

/**
 * What an engine's driver tells the process that launched it, one line of its standard output each: progress,
 * notes, and how the run ended (its summary, or its failure with the summary of what it committed). Lines start
 * with {@value #PREFIX}; anything else the driver prints is passed through to people. The launch prints and
 * reports from these, as it does for a run in its own process.
 */
public final class EngineEvents {

    public static final String PREFIX = "kbackfill-event ";
    private static final ObjectMapper JSON = new ObjectMapper();

    private EngineEvents() {
    }

    /** What a failure was. */
    public enum Kind {
        /** Bad input: nothing was read or written (the command line's exit 2). */
        BAD_INPUT,
        /** The job is running elsewhere, or was created with another spec (exit 3). */
        CONFLICT,
        /** A runtime failure (exit 1). */
        FAILURE
    }

    /** What kind of failure {@code e} is, as every engine and the command line report it. */
    public static Kind kindOf(Throwable e) {
        if (e instanceof dev.kbackfill.resolver.RequestException || e instanceof dev.kbackfill.core.sink.SinkConfigException) {
            return Kind.BAD_INPUT;
        }
        if (e instanceof dev.kbackfill.core.run.RunFailure && (e.getCause() instanceof dev.kbackfill.core.sink.SinkConfigException
                || e.getCause() instanceof dev.kbackfill.resolver.RequestException)) {
            // the target or the options must change before the run can go on (a column the table lacks and cannot
            // be given here, two fields a mapping writes into one column): nothing of the refused batch was written,
            // and a retry would be refused the same way
            return Kind.BAD_INPUT;
        }
        if (e instanceof dev.kbackfill.core.sink.JobConflictException
                || (e instanceof dev.kbackfill.core.run.RunFailure && e.getCause() instanceof dev.kbackfill.core.sink.JobConflictException)) {
            return Kind.CONFLICT;
        }
        return Kind.FAILURE;
    }

    /** An event. */
    public sealed interface Event {
    }

    public record Progress(long done, long total, long records, long bytes) implements Event {
    }

    public record Note(String text) implements Event {
    }

    /** The run went to the end of its plan, or stopped at a limit or signal with its progress committed. */
    public record Done(RunSummary summary) implements Event {
    }

    /**
     * The run failed.
     *
     * @param transientFailure whether the driver found it worth retrying
     * @param summary          what the run committed before it failed, where known
     */
    public record Failed(Kind kind, String message, boolean transientFailure, Optional<RunSummary> summary)
            implements Event {
    }

    public static String progress(long done, long total, long records, long bytes) {
        ObjectNode n = JSON.createObjectNode();
        ObjectNode p = n.putObject("progress");
        p.put("done", done);
        p.put("total", total);
        p.put("records", records);
        p.put("bytes", bytes);
        return PREFIX + n;
    }

    public static String note(String text) {
        ObjectNode n = JSON.createObjectNode();
        n.put("note", text);
        return PREFIX + n;
    }

    public static String done(RunSummary summary) {
        ObjectNode n = JSON.createObjectNode();
        n.set("done", summaryNode(summary));
        return PREFIX + n;
    }

    public static String failed(Kind kind, String message, boolean transientFailure, RunSummary summary) {
        ObjectNode n = JSON.createObjectNode();
        ObjectNode f = n.putObject("failed");
        f.put("kind", kind.name());
        f.put("message", message);
        f.put("transient", transientFailure);
        if (summary != null) {
            f.set("summary", summaryNode(summary));
        }
        return PREFIX + n;
    }

    /** The event a line holds, if it is one. */
    public static Optional<Event> parse(String line) {
        if (!line.startsWith(PREFIX)) {
            return Optional.empty();
        }
        JsonNode n;
        try {
            n = JSON.readTree(line.substring(PREFIX.length()));
        } catch (IOException e) {
            return Optional.empty();
        }
        if (n.has("progress")) {
            JsonNode p = n.get("progress");
            return Optional.of(new Progress(p.path("done").asLong(), p.path("total").asLong(), p.path("records").asLong(),
                    p.path("bytes").asLong()));
        }
        if (n.has("note")) {
            return Optional.of(new Note(n.get("note").asText()));
        }
        if (n.has("done")) {
            return Optional.of(new Done(summary(n.get("done"))));
        }
        if (n.has("failed")) {
            JsonNode f = n.get("failed");
            return Optional.of(new Failed(Kind.valueOf(f.path("kind").asText("FAILURE")), f.path("message").asText(),
                    f.path("transient").asBoolean(),
                    f.has("summary") ? Optional.of(summary(f.get("summary"))) : Optional.empty()));
        }
        return Optional.empty();
    }

    static ObjectNode summaryNode(RunSummary s) {
        ObjectNode n = JSON.createObjectNode();
        n.put("job", s.job());
        n.put("run", s.run());
        n.put("bytes", s.bytes());
        n.put("batches", s.batches());
        n.put("durationNanos", s.duration().toNanos());
        ArrayNode ps = n.putArray("partitions");
        for (PartitionStats p : s.partitions()) {
            ArrayNode a = ps.addArray();
            a.add(p.partition()).add(p.read()).add(p.superseded()).add(p.filtered()).add(p.rejected()).add(p.written())
                    .add(p.keptOut()).add(p.lost()).add(p.next()).add(p.end()).add(p.late()).add(p.refused())
                    .add(p.supersededInLog());
        }
        return n;
    }

    static RunSummary summary(JsonNode n) {
        List<PartitionStats> partitions = new ArrayList<>();
        n.path("partitions").forEach(a -> partitions.add(new PartitionStats(a.get(0).asInt(), a.get(1).asLong(),
                a.get(2).asLong(), a.get(3).asLong(), a.get(4).asLong(), a.get(5).asLong(), a.get(6).asLong(),
                a.get(7).asLong(), a.get(8).asLong(), a.get(9).asLong(), a.get(10).asLong(),
                a.path(11).asLong(), a.path(12).asLong())));
        return new RunSummary(n.path("job").asText(), n.path("run").asInt(), partitions, n.path("bytes").asLong(),
                n.path("batches").asLong(), Duration.ofNanos(n.path("durationNanos").asLong()));
    }
}
