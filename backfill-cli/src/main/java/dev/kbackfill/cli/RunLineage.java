package dev.kbackfill.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.run.RunSummary;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.resolver.PartitionRange;

/**
 * {@code --lineage URL|FILE}: OpenLineage run events (spec 2-0-2) for a run, START when it begins and COMPLETE or FAIL
 * when it ends, written as JSON by kbackfill itself (the OpenLineage Java client is not among its dependencies). The
 * topic is the input dataset, the target the output, named by OpenLineage's conventions
 * ({@link SinkFactory#dataset}); the offset ranges are a run facet ({@code kbackfill_offsetRanges}), the rows written
 * the output's {@code outputStatistics}, {@code run --verify}'s result a {@code dataQualityAssertions} facet of the
 * output. An http(s) URL gets each event POSTed (to {@code /api/v1/lineage} when the URL has no path); anything else
 * is a file that gets one event per line. A lineage backend that cannot be reached is a warning, never the run's
 * failure.
 */
final class RunLineage {

    static final String SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String target;
    private final String namespace;
    private final String producer;
    private SinkFactory.Dataset input;
    private SinkFactory.Dataset output;
    private String store;
    private JobState state;
    private String runId;

    /**
     * @param target    an http(s) URL or a file
     * @param namespace the jobs' namespace in the events
     */
    RunLineage(String target, String namespace) {
        this.target = target;
        this.namespace = namespace;
        String version = Kbackfill.class.getPackage().getImplementationVersion();
        this.producer = "urn:kbackfill:" + (version == null ? "development" : version);
    }

    /** Whether {@code target} is an http(s) URL (else a file). */
    static boolean isUrl(String target) {
        return target.startsWith("http://") || target.startsWith("https://");
    }

    /** The datasets the run reads and writes, and the store its jobs are kept in (the run's identity). */
    void datasets(SinkFactory.Dataset input, SinkFactory.Dataset output, String store) {
        this.input = input;
        this.output = output;
        this.store = store;
    }

    /** The run begins. */
    void started(JobState s, java.io.PrintWriter err) {
        this.state = s;
        this.runId = UUID.nameUUIDFromBytes((store + "\n" + s.job() + "\n" + s.runId())
                .getBytes(StandardCharsets.UTF_8)).toString();
        emit(event("START", null, null, null), err);
    }

    /**
     * The run ended: COMPLETE, or FAIL with {@code error}; nothing if it never began (refused before its start, or
     * nothing to do).
     */
    void ended(boolean failed, String error, RunSummary summary, dev.kbackfill.core.verify.VerifyReport verified,
               java.io.PrintWriter err) {
        if (state == null) {
            return;
        }
        emit(event(failed ? "FAIL" : "COMPLETE", failed ? error : null, summary, verified), err);
    }

    private ObjectNode event(String type, String error, RunSummary summary,
                             dev.kbackfill.core.verify.VerifyReport verified) {
        ObjectNode e = JSON.createObjectNode();
        e.put("eventType", type);
        e.put("eventTime", Instant.now().toString());
        e.put("producer", producer);
        e.put("schemaURL", SCHEMA_URL);
        ObjectNode run = e.putObject("run");
        run.put("runId", runId);
        ObjectNode runFacets = run.putObject("facets");
        ObjectNode ranges = facet(runFacets, "kbackfill_offsetRanges", "urn:kbackfill:facets:OffsetRangesRunFacet:1");
        ranges.put("topic", state.plan().topic()).put("topicId", state.plan().topicId()).put("run", state.run());
        ArrayNode partitions = ranges.putArray("partitions");
        for (PartitionRange r : state.plan().partitions()) {
            partitions.addObject().put("partition", r.partition()).put("start", r.start()).put("end", r.end());
        }
        if (error != null) {
            facet(runFacets, "errorMessage", "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json"
                    + "#/$defs/ErrorMessageRunFacet").put("message", error).put("programmingLanguage", "JAVA");
        }
        ObjectNode job = e.putObject("job");
        job.put("namespace", namespace).put("name", state.job());
        facet(job.putObject("facets"), "jobType", "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json"
                + "#/$defs/JobTypeJobFacet").put("processingType", "BATCH").put("integration", "KBACKFILL")
                .put("jobType", "JOB");
        e.putArray("inputs").addObject().put("namespace", input.namespace()).put("name", input.name());
        ObjectNode out = e.putArray("outputs").addObject().put("namespace", output.namespace())
                .put("name", output.name());
        if (summary != null) {
            facet(out.putObject("outputFacets"), "outputStatistics", "https://openlineage.io/spec/facets/1-0-2/"
                    + "OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet")
                    .put("rowCount", summary.written());
        }
        if (verified != null) {
            ObjectNode assertion = facet(out.putObject("facets"), "dataQualityAssertions", "https://openlineage.io/"
                    + "spec/facets/1-0-1/DataQualityAssertionsDatasetFacet.json#/$defs/DataQualityAssertionsDatasetFacet")
                    .putArray("assertions").addObject();
            assertion.put("assertion", "kbackfill verify: the table holds the final state of the run's ranges")
                    .put("success", verified.agrees());
        }
        return e;
    }

    private ObjectNode facet(ObjectNode facets, String name, String schemaUrl) {
        return facets.putObject(name).put("_producer", producer).put("_schemaURL", schemaUrl);
    }

    private void emit(ObjectNode event, java.io.PrintWriter err) {
        String body = event.toString();
        try {
            if (isUrl(target)) {
                URI uri = URI.create(target);
                if (uri.getPath() == null || uri.getPath().isEmpty() || uri.getPath().equals("/")) {
                    uri = uri.resolve("/api/v1/lineage");
                }
                HttpResponse<String> response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
                        .send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                                HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() / 100 != 2) {
                    err.println("warning: the lineage endpoint " + uri + " answered " + response.statusCode() + " to the "
                            + event.path("eventType").asText() + " event");
                }
            } else {
                Files.writeString(Path.of(target), body + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            }
        } catch (IOException | RuntimeException e) {
            err.println("warning: cannot send the " + event.path("eventType").asText() + " lineage event to " + target
                    + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        err.flush();
    }
}
