package dev.kbackfill.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.kbackfill.core.run.PartitionStats;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.sink.JobState;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.ipc.http.HttpUrlConnectionSender;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.micrometer.registry.otlp.OtlpConfig;
import io.micrometer.registry.otlp.OtlpHttpMetricsSender;
import io.micrometer.registry.otlp.OtlpMeterRegistry;
import io.micrometer.registry.otlp.OtlpMetricsSender;

/**
 * A run's metrics through Micrometer, when it ends, whatever its outcome: written as a Prometheus text file
 * ({@code --metrics-file}, for node_exporter's textfile collector, the usual way to watch cron jobs) and/or
 * pushed over OTLP/HTTP ({@code --metrics-otlp}). Every value describes the last run of the job (gauges), so
 * an alert reads them directly: {@code kbackfill_run_exit_code != 0},
 * {@code time() - kbackfill_last_success_timestamp_seconds > 7200}. A failed run keeps the previous file's time of
 * the last success for its job.
 */
final class RunMetrics {

    static final String LAST_SUCCESS = "kbackfill_last_success_timestamp_seconds";

    private final Path file;
    private final URI otlp;

    RunMetrics(Path file, URI otlp) {
        this.file = file;
        this.otlp = otlp;
    }

    /** What the run did, as the report has it. */
    record Facts(String job, String topic, Integer run, String outcome, int exitCode, Instant started, Instant ended,
                 JobState state, RunSummary summary) {
    }

    void write(Facts facts, PrintWriter err) {
        if (file != null) {
            writeFile(facts, err);
        }
        if (otlp != null) {
            push(facts, err);
        }
    }

    /** The meters of a run; {@code lastSuccess} is the time of the job's last successful run, if known. */
    static void register(MeterRegistry registry, Facts f, OptionalDouble lastSuccess) {
        Tags job = Tags.of("job", f.job() == null ? "" : f.job());
        Tags topic = job.and("topic", f.topic() == null ? "" : f.topic());
        gauge(registry, "kbackfill.run.exit.code", job.and("outcome", f.outcome()), f.exitCode(), null,
                "Exit code of the job's last run (0 done, 1 failure, 2 bad input, 3 conflict, 130/143 signal)");
        gauge(registry, "kbackfill.run.start.timestamp", job, f.started().toEpochMilli() / 1000.0, "seconds",
                "When the job's last run started");
        gauge(registry, "kbackfill.run.end.timestamp", job, f.ended().toEpochMilli() / 1000.0, "seconds",
                "When the job's last run ended");
        gauge(registry, "kbackfill.run.duration", job, Duration.between(f.started(), f.ended()).toMillis() / 1000.0,
                "seconds", "How long the job's last run took");
        lastSuccess.ifPresent(t -> gauge(registry, "kbackfill.last.success.timestamp", job, t, "seconds",
                "When a run of the job last ended with exit code 0"));
        if (f.run() != null) {
            gauge(registry, "kbackfill.run.number", job, f.run(), null, "The job's run number");
        }
        if (f.state() != null) {
            gauge(registry, "kbackfill.plan.offsets", topic, f.state().plan().totalSpan(), null,
                    "Offsets in the plan of the job's last run");
        }
        RunSummary s = f.summary();
        if (s == null) {
            return;
        }
        gauge(registry, "kbackfill.run.read", topic, s.bytes(), "bytes", "Bytes of keys and values read");
        gauge(registry, "kbackfill.run.batches", topic, s.batches(), null, "Batches written");
        for (PartitionStats p : s.partitions()) {
            Tags partition = topic.and("partition", Integer.toString(p.partition()));
            Map<String, Long> counts = new java.util.LinkedHashMap<>();
            counts.put("read", p.read());
            counts.put("written", p.written());
            counts.put("kept_out", p.keptOut());
            counts.put("superseded", p.superseded());
            counts.put("superseded_in_log", p.supersededInLog());
            counts.put("filtered", p.filtered());
            counts.put("rejected", p.rejected());
            counts.put("lost", p.lost());
            counts.forEach((kind, n) -> gauge(registry, "kbackfill.run.records", partition.and("count", kind), n,
                    null, "Records of the last run by what became of them (written: changes written)"));
            gauge(registry, "kbackfill.run.late.records", partition, p.late(), null,
                    "Records whose timestamp lies below an earlier record's of their partition, ordered by their log's time");
            gauge(registry, "kbackfill.offsets.left", partition, p.left(), null,
                    "Offsets of the plan not yet committed");
        }
    }

    private static void gauge(MeterRegistry registry, String name, Tags tags, double value, String unit,
                              String help) {
        Gauge.builder(name, () -> value).tags(tags).baseUnit(unit).description(help).strongReference(true)
                .register(registry);
    }

    /** The run's end, when it succeeded: the time of the job's last success. */
    private static OptionalDouble succeeded(Facts f) {
        return f.exitCode() == ExitCodes.OK ? OptionalDouble.of(f.ended().toEpochMilli() / 1000.0) : OptionalDouble.empty();
    }

    private void writeFile(Facts f, PrintWriter err) {
        OptionalDouble lastSuccess = succeeded(f).isPresent() ? succeeded(f) : previousSuccess(file, f.job());
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try {
            register(registry, f, lastSuccess);
            AtomicFile.replace(file, registry.scrape());
        } catch (IOException e) {
            err.println("warning: cannot write the metrics to " + file + ": " + e.getMessage());
        } finally {
            registry.close();
        }
    }

    private static final Pattern SUCCESS_LINE = Pattern.compile(
            "^" + LAST_SUCCESS + "\\{(?:[^}]*,)?job=\"((?:[^\"\\\\]|\\\\.)*)\"[^}]*\\}\\s+(\\S+)");

    /** The time of the job's last success in an earlier metrics file, if that file holds one. */
    static OptionalDouble previousSuccess(Path file, String job) {
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                Matcher m = SUCCESS_LINE.matcher(line);
                if (m.find() && m.group(1).replace("\\\"", "\"").replace("\\\\", "\\").equals(job)) {
                    return OptionalDouble.of(Double.parseDouble(m.group(2)));
                }
            }
        } catch (NoSuchFileException e) {
            return OptionalDouble.empty();
        } catch (IOException | NumberFormatException e) {
            return OptionalDouble.empty(); // an unreadable earlier file: the time is simply not carried over
        }
        return OptionalDouble.empty();
    }

    private void push(Facts f, PrintWriter err) {
        Exception[] failure = {null};
        OtlpMetricsSender http = new OtlpHttpMetricsSender(new HttpUrlConnectionSender(Duration.ofSeconds(5),
                Duration.ofSeconds(10)));
        OtlpMetricsSender sender = request -> {
            try {
                http.send(request);
            } catch (Exception e) {
                failure[0] = e;
                throw e;
            }
        };
        Map<String, String> settings = new HashMap<>();
        settings.put("otlp.url", otlp.toString());
        settings.put("otlp.resourceAttributes", "service.name=kbackfill");
        settings.put("otlp.step", "1h"); // published once, when the registry closes at the end of the run
        OtlpConfig config = key -> settings.get(key);
        OtlpMeterRegistry registry = OtlpMeterRegistry.builder(config).metricsSender(sender).build();
        register(registry, f, succeeded(f));
        registry.close();
        if (failure[0] != null) {
            err.println("warning: cannot push the metrics to " + otlp + ": " + oneLine(failure[0]));
        }
    }

    private static String oneLine(Exception e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return m.replaceAll("\\s*\\R\\s*", " ").strip();
    }
}
