package dev.kbackfill.core.sink;

import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.resolver.Plan;

/**
 * A {@link JobState} as one JSON document, for sinks that keep it as a single value (a record of the Kafka sink's
 * job topic): {@code {"format":"kbackfill-job","version":1,"job":..,"fingerprint":..,"run":..,"spec":{..},
 * "incarnation":..,"nextOffsets":{..},"plan":{..}}}; {@code spec} is absent in states stored before jobs had one,
 * {@code incarnation} in states stored before incarnations.
 */
public final class JobStateJson {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String FORMAT = "kbackfill-job";

    private JobStateJson() {
    }

    public static String write(JobState s) {
        ObjectNode root = JSON.createObjectNode();
        root.put("format", FORMAT);
        root.put("version", 1);
        root.put("job", s.job());
        root.put("fingerprint", s.fingerprint());
        root.put("run", s.run());
        if (!s.incarnation().isEmpty()) {
            root.put("incarnation", s.incarnation());
        }
        if (s.spec().isKnown()) {
            root.set("spec", specNode(s.spec()));
        }
        ObjectNode next = root.putObject("nextOffsets");
        s.nextOffsets().forEach((p, o) -> next.put(Integer.toString(p), o));
        try {
            root.set("plan", JSON.readTree(s.plan().toJson()));
            return JSON.writeValueAsString(root);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public static JobState read(String json) {
        try {
            JsonNode root = JSON.readTree(json);
            if (!FORMAT.equals(root.path("format").asText()) || root.path("version").asInt() != 1) {
                throw new SinkException("not a kbackfill job state (version 1): " + json.substring(0, Math.min(80, json.length())));
            }
            Map<Integer, Long> next = new TreeMap<>();
            root.path("nextOffsets").fields().forEachRemaining(e -> next.put(Integer.parseInt(e.getKey()), e.getValue().asLong()));
            return new JobState(root.path("job").asText(), root.path("fingerprint").asText(), root.path("run").asInt(),
                    Plan.fromJson(JSON.writeValueAsString(root.path("plan"))), next, spec(root.path("spec")),
                    root.path("incarnation").asText(""));
        } catch (IOException e) {
            throw new SinkException("a stored job state is not JSON: " + e.getMessage(), e);
        }
    }

    /** A job spec alone as JSON, for sinks that store it in a column of its own: {@code {"destination":..,..}}. */
    public static String writeSpec(JobSpec spec) {
        return specNode(spec).toString();
    }

    /** Reads {@link #writeSpec}. */
    public static JobSpec readSpec(String json) {
        try {
            return spec(JSON.readTree(json));
        } catch (IOException e) {
            throw new SinkException("a stored job spec is not JSON: " + e.getMessage(), e);
        }
    }

    private static ObjectNode specNode(JobSpec spec) {
        ObjectNode node = JSON.createObjectNode();
        spec.parts().forEach(node::put);
        return node;
    }

    private static JobSpec spec(JsonNode node) {
        Map<String, String> parts = new TreeMap<>();
        node.fields().forEachRemaining(e -> parts.put(e.getKey(), e.getValue().asText()));
        return new JobSpec(parts);
    }
}
