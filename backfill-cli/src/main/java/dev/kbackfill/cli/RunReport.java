package dev.kbackfill.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.run.PartitionStats;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.resolver.PartitionRange;

/**
 * {@code --report FILE}: one JSON document per run, for cron and monitoring: the job and run, how it ended (exit
 * code, outcome, the error's message), when, the plan, and per partition what was read, written, kept out,
 * superseded, filtered, rejected and lost, and where it stands. Written whole (a temporary file moved into place),
 * after the run, whatever its outcome, once the command line was understood. The same facts go to
 * {@link RunMetrics} ({@code --metrics-file}, {@code --metrics-otlp}).
 */
final class RunReport {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path file;
    private final RunMetrics metrics;
    private final RunLineage lineage;
    private final Instant started = Instant.now();
    private String job;
    private String topic;
    private JobState state;
    private RunSummary summary;
    private String outcome = "failed";
    private dev.kbackfill.core.verify.VerifyReport verified;

    /** A report written to {@code file}, as {@code metrics} and/or as lineage events (any may be null). */
    RunReport(Path file, RunMetrics metrics, RunLineage lineage) {
        this.file = file;
        this.metrics = metrics;
        this.lineage = lineage;
    }

    /** The lineage events this report sends, or null. */
    RunLineage lineage() {
        return lineage;
    }

    void topic(String name) {
        this.topic = name;
    }

    void job(String name) {
        this.job = name;
    }

    /**
     * The run begins: the report says so at once ({@code "outcome": "running"}), so that a run killed before its end
     * (SIGKILL, a host lost) is never shown as the outcome of the run before it.
     */
    void starting(JobState s, java.io.PrintWriter err) {
        this.state = s;
        this.job = s.job();
        if (lineage != null) {
            lineage.started(s, err);
        }
        if (file != null) {
            ObjectNode root = head("running");
            plan(root);
            writeFile(root, err);
        }
    }

    private ObjectNode head(String outcomeNow) {
        ObjectNode root = JSON.createObjectNode();
        root.put("report", 1);
        root.put("job", job);
        if (state != null) {
            root.put("run", state.run());
        } else if (summary != null) {
            root.put("run", summary.run());
        }
        root.put("outcome", outcomeNow);
        return root;
    }

    private void plan(ObjectNode root) {
        if (state != null) {
            ObjectNode plan = root.putObject("plan");
            plan.put("topic", state.plan().topic());
            plan.put("topicId", state.plan().topicId());
            plan.put("resolvedAt", state.plan().resolvedAt().toString());
            plan.put("offsets", state.plan().totalSpan());
            ArrayNode ranges = plan.putArray("partitions");
            for (PartitionRange r : state.plan().partitions()) {
                ranges.addObject().put("partition", r.partition()).put("start", r.start()).put("end", r.end());
            }
        }
    }

    /** Replaces the report file whole (a temporary file moved into place); failing is a warning. */
    private void writeFile(ObjectNode root, java.io.PrintWriter err) {
        try {
            AtomicFile.replace(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
        } catch (IOException e) {
            err.println("warning: cannot write the report to " + file + ": " + e.getMessage());
        }
    }

    void nothingToDo(JobState s) {
        this.state = s;
        this.job = s.job();
        this.outcome = "nothing-to-do";
    }

    void completed(RunSummary s) {
        this.summary = s;
        this.outcome = s.left() == 0 ? "completed"
                : dev.kbackfill.core.run.StopRequest.requested() ? "stopped-on-signal" : "stopped-at-limit";
    }

    /** The run's own verification ({@code run --verify}). */
    void verified(dev.kbackfill.core.verify.VerifyReport v) {
        this.verified = v;
        if (!v.agrees()) {
            this.outcome = "verify-disagrees";
        }
    }

    void failed(RunSummary partial) {
        this.summary = partial;
        this.outcome = "failed";
    }

    /** Writes the report and the metrics; either failing is a warning, never the run's failure. */
    void write(int exitCode, String error, java.io.PrintWriter err) {
        Instant ended = Instant.now();
        if (metrics != null) {
            metrics.write(new RunMetrics.Facts(job, state != null ? state.plan().topic() : topic,
                    state != null ? Integer.valueOf(state.run()) : summary != null ? Integer.valueOf(summary.run())
                    : null, outcome, exitCode, started, ended, state, summary), err);
        }
        if (lineage != null) {
            lineage.ended(error != null || outcome.equals("failed"), error, summary, verified, err);
        }
        if (file == null) {
            return;
        }
        ObjectNode root = head(outcome);
        root.put("exitCode", exitCode);
        if (error != null) {
            root.put("error", error);
        }
        root.put("startedAt", started.toString());
        root.put("endedAt", ended.toString());
        root.put("seconds", Duration.between(started, ended).toMillis() / 1000.0);
        if (verified != null) {
            ObjectNode v = root.putObject("verify");
            v.put("agrees", verified.agrees()).put("keys", verified.keys()).put("lost", verified.lost())
                    .put("rejected", verified.rejected()).put("seconds", verified.elapsed().toMillis() / 1000.0);
            ObjectNode counts = v.putObject("counts");
            verified.counts().forEach((verdict, n) -> counts.put(verdict.label(), n));
        }
        plan(root);
        if (summary != null) {
            ObjectNode totals = root.putObject("totals");
            totals.put("read", summary.read()).put("written", summary.written()).put("keptOut", summary.keptOut())
                    .put("superseded", summary.superseded()).put("supersededInLog", summary.supersededInLog())
                    .put("filtered", summary.filtered())
                    .put("rejected", summary.rejected()).put("refused", summary.refused()).put("lost", summary.lost())
                    .put("late", summary.late())
                    .put("bytes", summary.bytes())
                    .put("batches", summary.batches());
            ArrayNode warnings = root.putArray("warnings");
            summary.warnings().forEach(warnings::add);
            ArrayNode parts = root.putArray("partitions");
            for (PartitionStats p : summary.partitions()) {
                parts.addObject().put("partition", p.partition()).put("read", p.read()).put("written", p.written())
                        .put("keptOut", p.keptOut()).put("superseded", p.superseded())
                        .put("supersededInLog", p.supersededInLog()).put("filtered", p.filtered())
                        .put("rejected", p.rejected()).put("lost", p.lost()).put("late", p.late()).put("next", p.next())
                        .put("end", p.end());
            }
        }
        writeFile(root, err);
    }
}
