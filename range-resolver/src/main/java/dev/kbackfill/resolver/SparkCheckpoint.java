package dev.kbackfill.resolver;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * What a Spark Structured Streaming query's checkpoint directory says about the Kafka offsets it processed, read
 * from Spark's own files and nothing else (no Spark on the classpath):
 * <ul>
 *   <li>{@code offsets/N}: batch N's end offsets (exclusive), written before the batch runs: line 1 the version
 *   ({@code v1}), line 2 the batch's metadata JSON, then one line per source in the query's plan order ({@code -}
 *   for none), a Kafka source's being {@code {"topic":{"0":23,"1":42}}}; a newer layout prefixes a line with its
 *   source's id ({@code 0:{"topic":...}}), read alike;</li>
 *   <li>{@code commits/N}: batch N is committed. Where the query stopped is the largest committed batch's offsets; an
 *   {@code offsets/M+1} without {@code commits/M+1} was planned and is re-run on restart. Old entries are purged
 *   ({@code spark.sql.streaming.minBatchesToRetain}, 100 by default);</li>
 *   <li>{@code sources/N/0}: source N's initial offsets, written once when the query first started (a 0x00 byte,
 *   {@code v1}, the JSON): where that query began;</li>
 *   <li>{@code metadata}: the query's id.</li>
 * </ul>
 */
public final class SparkCheckpoint {

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Offsets of one topic read from a checkpoint, with what the checkpoint says beside them.
     *
     * @param offsets per partition, the next offset the query reads (exclusive end of what it processed, or where it
     *                started); Spark's -2 and -1 stand for earliest and latest
     * @param notes   for people: which batch, planned batches not committed, purged batches, other topics
     */
    public record Positions(SortedMap<Integer, Long> offsets, List<String> notes) {
    }

    private final CheckpointFiles files;
    private final String dir;

    public SparkCheckpoint(Path dir) {
        this(new CheckpointFiles.Local(dir.toString(), dir));
    }

    /** The checkpoint whose files {@code files} reads (a local directory, an object store). */
    public SparkCheckpoint(CheckpointFiles files) {
        this.files = files;
        this.dir = files.location();
    }

    /**
     * Where the query stopped: the end offsets of its last committed batch for {@code topic}.
     *
     * @throws RequestException when the directory is not a checkpoint, has no committed batch, or its query never
     *                          read {@code topic}
     */
    public Positions stopped(String topic) {
        TreeSet<Long> planned = batches("offsets");
        TreeSet<Long> committed = batches("commits");
        if (planned.isEmpty()) {
            throw new RequestException("invalid checkpoint '" + dir + "': no offsets/ batches in it (expected a Spark "
                    + "Structured Streaming checkpoint directory, the query's checkpointLocation)");
        }
        Long last = null;
        for (Long b : committed.descendingSet()) {
            if (planned.contains(b)) {
                last = b;
                break;
            }
        }
        if (last == null) {
            throw new RequestException("checkpoint '" + dir + "' has no committed batch (batches " + planned.first()
                    + ".." + planned.last() + " planned, none in commits/): its query processed nothing yet; use "
                    + "checkpoint-start:" + dir + " for where it starts");
        }
        List<String> notes = new ArrayList<>();
        String query = queryId().map(id -> "query " + id).orElse("the query");
        List<Map<String, SortedMap<Integer, Long>>> sources = sources("offsets/" + last);
        SortedMap<Integer, Long> offsets = topicOf(sources, topic, "offsets/" + last);
        notes.add("the end of batch " + last + ", the last that " + query + " of checkpoint " + dir + " committed; "
                + "restarted on this checkpoint, the query resumes from its offsets and ignores startingOffsets");
        if (planned.last() > last) {
            long next = last + 1;
            notes.add("batch " + next + " was planned (offsets/" + next + ") but not committed: a restart of the query "
                    + "runs it again" + (planned.last() > next ? ", and batches up to " + planned.last() + " after it" : "")
                    + "; this bound is where committed work ends");
        }
        if (planned.first() > 0) {
            notes.add("batches below " + planned.first() + " were purged from the checkpoint (minBatchesToRetain): "
                    + "only where the query stands is known, not how it got there");
        }
        try {
            notes.add("the query started at " + started(topic).offsets() + " (sources/N/0): checkpoint-start:" + dir);
        } catch (RequestException e) {
            // no initial offsets kept (a checkpoint copied without sources/): nothing to say about the start
        }
        List<String> others = otherTopics(sources, topic);
        if (!others.isEmpty()) {
            notes.add("the query also reads " + String.join(", ", others) + ": this bound is about " + topic + " only");
        }
        return new Positions(offsets, notes);
    }

    /**
     * Where the query started: its Kafka source's initial offsets for {@code topic} ({@code sources/N/0}).
     *
     * @throws RequestException when no source of the checkpoint read {@code topic}
     */
    public Positions started(String topic) {
        List<String> seen = new ArrayList<>();
        List<String> names;
        try {
            if (!files.exists()) {
                throw new RequestException("invalid checkpoint '" + dir + "': no such directory");
            }
            names = files.list("sources");
            if (names.isEmpty()) {
                throw new RequestException("invalid checkpoint '" + dir + "': no sources/ directory (expected a Spark "
                        + "Structured Streaming checkpoint directory with a Kafka source)");
            }
        } catch (IOException e) {
            throw new RequestException("cannot read checkpoint '" + dir + "': " + e.getMessage());
        }
        for (Map.Entry<String, Map<String, SortedMap<Integer, Long>>> source : initialOffsets(names).entrySet()) {
            if (source.getValue().containsKey(topic)) {
                List<String> notes = new ArrayList<>();
                notes.add("where " + queryId().map(id -> "query " + id).orElse("the query") + " of checkpoint "
                        + dir + " started (sources/" + source.getKey() + "/0, written when it first ran)");
                return new Positions(source.getValue().get(topic), notes);
            }
            seen.addAll(source.getValue().keySet());
        }
        throw new RequestException("checkpoint '" + dir + "' has no Kafka source that started on topic " + topic
                + (seen.isEmpty() ? " (none of its sources is a Kafka source)"
                : " (its sources started on " + String.join(", ", new TreeSet<>(seen)) + ")"));
    }

    /**
     * The topics the query read: those of its newest offsets/N, or where there is none yet, those its Kafka sources
     * started on.
     */
    public java.util.SortedSet<String> topics() {
        TreeSet<Long> planned = batches("offsets");
        if (!planned.isEmpty()) {
            return topicsOf(sources("offsets/" + planned.last()));
        }
        try {
            return topicsOf(List.copyOf(initialOffsets(files.list("sources")).values()));
        } catch (IOException e) {
            throw new RequestException("cannot read checkpoint '" + dir + "': " + e.getMessage());
        }
    }

    /**
     * The initial offsets of the query's Kafka sources ({@code sources/N/0}) among {@code names} (the entries of
     * {@code sources/}), by source, in their order; a source of another kind (files, rate) is left out.
     */
    private Map<String, Map<String, SortedMap<Integer, Long>>> initialOffsets(List<String> names) {
        Map<String, Map<String, SortedMap<Integer, Long>>> sources = new java.util.LinkedHashMap<>();
        try {
            for (String source : names) {
                String text = files.read("sources/" + source + "/0").map(b -> new String(b, StandardCharsets.UTF_8))
                        .orElse("");
                int json = text.indexOf('{');
                if (json < 0) {
                    continue;
                }
                try {
                    sources.put(source, parseOffsets(text.substring(json), "sources/" + source + "/0"));
                } catch (BadOffsets e) {
                    throw located(e);
                } catch (RequestException e) {
                    // another kind of source: its initial offset is no topic's
                }
            }
        } catch (IOException e) {
            throw new RequestException("cannot read checkpoint '" + dir + "': " + e.getMessage());
        }
        return sources;
    }

    /** A file's bad offsets, named with the checkpoint's directory. */
    private RequestException located(BadOffsets e) {
        return new RequestException("invalid checkpoint '" + dir + "': " + e.getMessage());
    }

    private Optional<String> queryId() {
        try {
            Optional<byte[]> metadata = files.read("metadata");
            if (metadata.isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(JSON.readTree(metadata.get()).path("id").asText()).filter(s -> !s.isEmpty());
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private TreeSet<Long> batches(String log) {
        TreeSet<Long> batches = new TreeSet<>();
        try {
            if (log.equals("offsets") && !files.exists()) {
                throw new RequestException("invalid checkpoint '" + dir + "': no such directory");
            }
            files.list(log).stream().filter(n -> n.matches("\\d+")).forEach(n -> batches.add(Long.parseLong(n)));
        } catch (IOException e) {
            throw new RequestException("cannot read checkpoint '" + dir + "': " + e.getMessage());
        }
        return batches;
    }

    /** The sources' offsets of one offsets/N file, in plan order ({@code null} for a source without any). */
    private List<Map<String, SortedMap<Integer, Long>>> sources(String file) {
        List<String> lines;
        try {
            lines = files.read(file).map(b -> new String(b, StandardCharsets.UTF_8).lines().toList())
                    .orElseThrow(() -> new IOException("no such file"));
        } catch (IOException e) {
            throw new RequestException("cannot read checkpoint file " + dir + "/" + file + ": " + e.getMessage());
        }
        if (lines.isEmpty() || !lines.get(0).strip().matches("v\\d+")) {
            throw new RequestException("checkpoint file " + dir + "/" + file + " does not start with a version line "
                    + "(v1): not a Spark offsets log");
        }
        List<Map<String, SortedMap<Integer, Long>>> sources = new ArrayList<>();
        for (String line : lines.subList(Math.min(2, lines.size()), lines.size())) {
            String l = line.strip();
            int json = l.indexOf('{');
            if (l.isEmpty() || l.equals("-") || json < 0) {
                sources.add(null); // a source without offsets, or not Kafka's
                continue;
            }
            try {
                sources.add(parseOffsets(l.substring(json), file));
            } catch (BadOffsets e) {
                throw located(e);
            } catch (RequestException e) {
                sources.add(null); // another kind of source's offset (files, rate)
            }
        }
        return sources;
    }

    private SortedMap<Integer, Long> topicOf(List<Map<String, SortedMap<Integer, Long>>> sources, String topic,
                                             String file) {
        List<String> seen = new ArrayList<>();
        for (Map<String, SortedMap<Integer, Long>> s : sources) {
            if (s != null && s.containsKey(topic)) {
                return s.get(topic);
            }
            if (s != null) {
                seen.addAll(s.keySet());
            }
        }
        throw new RequestException("checkpoint '" + dir + "' (" + file + ") holds no offsets of topic " + topic
                + (seen.isEmpty() ? ": none of its query's sources is a Kafka source"
                : ": its query reads " + String.join(", ", new TreeSet<>(seen))));
    }

    private static List<String> otherTopics(List<Map<String, SortedMap<Integer, Long>>> sources, String topic) {
        TreeSet<String> others = topicsOf(sources);
        others.remove(topic);
        return List.copyOf(others);
    }

    /** The topics of a list of sources' offsets ({@code null} for a source without any). */
    private static TreeSet<String> topicsOf(List<Map<String, SortedMap<Integer, Long>>> sources) {
        TreeSet<String> topics = new TreeSet<>();
        sources.forEach(s -> {
            if (s != null) {
                topics.addAll(s.keySet());
            }
        });
        return topics;
    }

    /**
     * A Kafka source's offsets whose partitions or offsets no Kafka topic can have: a checkpoint file written by hand
     * or damaged. Never taken for another kind of source's offsets.
     */
    static final class BadOffsets extends RequestException {
        BadOffsets(String message) {
            super(message);
        }
    }

    /**
     * {@code {"topic":{"0":23}}} into offsets by topic and partition.
     *
     * @param where the file, as messages name it
     * @throws RequestException not a Kafka source's offsets (another kind of source's: files, rate)
     * @throws BadOffsets       a Kafka source's offsets with a partition that is not a partition number (0 to
     *                          2147483647) or an offset that is not a whole number of 0 or more (-2 and -1, Spark's
     *                          earliest and latest, only where the query started)
     */
    static Map<String, SortedMap<Integer, Long>> parseOffsets(String json, String where) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (IOException e) {
            throw new RequestException("checkpoint file " + where + " holds no offsets JSON: " + e.getMessage());
        }
        if (root == null || !root.isObject() || root.isEmpty()) {
            throw new RequestException("checkpoint file " + where + ": not a Kafka source's offsets");
        }
        for (Iterator<Map.Entry<String, JsonNode>> topics = root.fields(); topics.hasNext(); ) {
            if (!topics.next().getValue().isObject()) {
                throw new RequestException("checkpoint file " + where + ": not a Kafka source's offsets");
            }
        }
        boolean initial = where.startsWith("sources/");
        Map<String, SortedMap<Integer, Long>> out = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> topics = root.fields(); topics.hasNext(); ) {
            Map.Entry<String, JsonNode> t = topics.next();
            SortedMap<Integer, Long> partitions = new TreeMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> ps = t.getValue().fields(); ps.hasNext(); ) {
                Map.Entry<String, JsonNode> p = ps.next();
                String at = "checkpoint file " + where + ", topic " + t.getKey() + ": ";
                int partition;
                try {
                    partition = p.getKey().matches("\\d{1,10}") ? Integer.parseInt(p.getKey()) : -1;
                } catch (NumberFormatException e) {
                    partition = -1;
                }
                if (partition < 0) {
                    throw new BadOffsets(at + "partition '" + p.getKey() + "' is not a partition number (expected 0 to "
                            + Integer.MAX_VALUE + ")");
                }
                JsonNode v = p.getValue();
                long offset = v.isIntegralNumber() && v.canConvertToLong() ? v.asLong() : Long.MIN_VALUE;
                if (offset < (initial ? -2 : 0)) {
                    throw new BadOffsets(at + "partition " + partition + " has offset " + v + ", which no Kafka log "
                            + "has (expected a whole number from 0 to " + Long.MAX_VALUE
                            + (initial ? ", or -2 and -1 for earliest and latest" : "") + ")");
                }
                partitions.put(partition, offset);
            }
            out.put(t.getKey(), partitions);
        }
        return out;
    }
}
