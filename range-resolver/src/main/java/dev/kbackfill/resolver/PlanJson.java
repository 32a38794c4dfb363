package dev.kbackfill.resolver;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.IsolationLevel;

/**
 * The JSON form of a {@link Plan}: a document tagged {@code "format": "kbackfill-plan"} with a {@code version}.
 * A reader refuses a newer version rather than misread it. Offsets are numbers, times ISO-8601 UTC strings.
 */
final class PlanJson {

    static final String FORMAT = "kbackfill-plan";
    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private PlanJson() {
    }

    static String write(Plan plan) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("format", FORMAT);
        root.put("version", Plan.FORMAT_VERSION);
        BackfillRequest r = plan.request();
        ObjectNode request = root.putObject("request");
        request.put("topic", r.topic());
        request.put("from", r.fromText());
        request.put("to", r.toText());
        request.put("zone", r.zone().getId());
        if (r.partitions().isPresent()) {
            ArrayNode ps = request.putArray("partitions");
            r.partitions().get().forEach(ps::add);
        }
        request.put("isolationLevel", r.isolationLevel().name().toLowerCase(java.util.Locale.ROOT));
        request.put("allowDataLoss", r.allowDataLoss());
        if (!r.readers().isEmpty()) {
            ObjectNode readers = request.putObject("readers");
            r.readers().forEach(readers::put);
        }
        root.put("resolvedAt", plan.resolvedAt().toString());
        plan.fromTime().ifPresent(t -> root.put("fromTime", t.toString()));
        plan.toTime().ifPresent(t -> root.put("toTime", t.toString()));
        root.put("clusterId", plan.clusterId());
        root.put("topic", plan.topic());
        root.put("topicId", plan.topicId());
        root.put("timestampType", plan.timestampType().configValue());
        root.put("totalSpan", plan.totalSpan());
        writeNotes(root.putArray("notes"), plan.notes());
        ArrayNode partitions = root.putArray("partitions");
        for (PartitionRange range : plan.partitions()) {
            ObjectNode p = partitions.addObject();
            p.put("partition", range.partition());
            p.put("start", range.start());
            p.put("end", range.end());
            p.put("span", range.span());
            p.put("logStart", range.logStart());
            p.put("logEnd", range.logEnd());
            range.startTime().ifPresent(t -> p.put("startTime", t.toString()));
            writeNotes(p.putArray("notes"), range.notes());
        }
        return toString(root);
    }

    static Plan read(String json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new RequestException("not a kbackfill plan: malformed JSON at line "
                    + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr());
        }
        if (root == null || !root.isObject() || !FORMAT.equals(root.path("format").asText())) {
            throw new RequestException("not a kbackfill plan: expected a JSON object with \"format\": \"" + FORMAT + "\"");
        }
        int version = root.path("version").asInt(-1);
        if (version != Plan.FORMAT_VERSION) {
            throw new RequestException("kbackfill plan version " + root.path("version")
                    + " is not supported: this kbackfill reads version " + Plan.FORMAT_VERSION);
        }
        try {
            JsonNode r = required(root, "request");
            BackfillRequest.Builder b = BackfillRequest.builder(text(r, "topic"))
                    .from(text(r, "from"))
                    .to(text(r, "to"))
                    .zone(ZoneId.of(text(r, "zone")))
                    .isolationLevel(IsolationLevel.valueOf(text(r, "isolationLevel").toUpperCase(java.util.Locale.ROOT)))
                    .allowDataLoss(required(r, "allowDataLoss").asBoolean());
            if (r.has("partitions")) {
                TreeSet<Integer> ps = new TreeSet<>();
                r.get("partitions").forEach(n -> ps.add(n.intValue()));
                b.partitions(ps);
            }
            if (r.has("readers")) {
                java.util.Map<String, String> readers = new java.util.TreeMap<>();
                r.get("readers").fields().forEachRemaining(e -> readers.put(e.getKey(), e.getValue().asText()));
                b.readers(readers);
            }
            List<PartitionRange> ranges = new ArrayList<>();
            for (JsonNode p : required(root, "partitions")) {
                ranges.add(new PartitionRange(required(p, "partition").intValue(), required(p, "start").longValue(),
                        required(p, "end").longValue(), required(p, "logStart").longValue(),
                        required(p, "logEnd").longValue(), optionalInstant(p, "startTime"),
                        readNotes(required(p, "notes"))));
            }
            return new Plan(b.buildStored(), Instant.parse(text(root, "resolvedAt")),
                    optionalInstant(root, "fromTime"), optionalInstant(root, "toTime"), text(root, "clusterId"),
                    text(root, "topicId"), TopicInfo.TimestampType.fromConfig(text(root, "timestampType")), ranges,
                    readNotes(required(root, "notes")));
        } catch (DateTimeException | IllegalArgumentException e) {
            throw new RequestException("not a valid kbackfill plan: " + e.getMessage(), e);
        }
    }

    static String sparkOffsets(Plan plan, boolean starting) {
        ObjectNode root = MAPPER.createObjectNode();
        ObjectNode topic = root.putObject(plan.topic());
        for (PartitionRange r : plan.partitions()) {
            topic.put(Integer.toString(r.partition()), starting ? r.start() : r.end());
        }
        try {
            return MAPPER.writer().without(SerializationFeature.INDENT_OUTPUT).writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void writeNotes(ArrayNode array, List<Note> notes) {
        for (Note n : notes) {
            ObjectNode o = array.addObject();
            o.put("kind", n.kind().name());
            o.put("message", n.message());
        }
    }

    private static List<Note> readNotes(JsonNode array) {
        List<Note> notes = new ArrayList<>();
        for (JsonNode n : array) {
            notes.add(new Note(Note.Kind.valueOf(text(n, "kind")), text(n, "message")));
        }
        return notes;
    }

    private static Optional<Instant> optionalInstant(JsonNode node, String field) {
        return node.hasNonNull(field) ? Optional.of(Instant.parse(node.get(field).asText())) : Optional.empty();
    }

    private static JsonNode required(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            throw new IllegalArgumentException("missing field \"" + field + "\"");
        }
        return v;
    }

    private static String text(JsonNode node, String field) {
        return required(node, field).asText();
    }

    private static String toString(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
