package dev.kbackfill.resolver;

import static dev.kbackfill.resolver.Wording.Term.*;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Turns a bound read from another reader ({@link Bound.External}) into the offsets it stands for, once, with a
 * note per partition saying where each came from: a Spark checkpoint's files, or a group's committed offsets
 * listed through the Admin API (never joined, nothing committed).
 */
public final class ReaderPositions {

    /** The bound as offsets per partition, and what to say about them. */
    public record Materialized(Bound.PerPartition bound, Map<Integer, List<Note>> partitionNotes, List<Note> notes) {
    }

    private ReaderPositions() {
    }

    /**
     * Where the reader {@code b} names stands on every partition of {@code topic}, as offset bounds, with notes.
     *
     * @param option the option it was given as, for notes and messages ({@code --from})
     * @throws RequestException a checkpoint that cannot be read or holds no offsets of the topic, a group without
     *                          committed offsets for partitions that have no fallback
     */
    public static Materialized resolve(String option, Bound.External b, TopicInfo topic, OffsetSource source) {
        return resolve(option, b, topic, source, java.util.Map.of());
    }

    /** What a reader's positions are read as: offsets per partition, where they come from, what was said of them. */
    private record Positions(SortedMap<Integer, Long> offsets, String origin, List<String> said) {
    }

    /** Reads the reader's positions: a Spark checkpoint's, a Connect sink's (from its worker or group), a group's. */
    private static Positions positions(String option, Bound.External b, String name, OffsetSource source,
                                       Map<String, String> settings) {
        SortedMap<Integer, Long> offsets;
        List<String> said = new ArrayList<>();
        String origin;
        switch (b.kind()) {
            case CHECKPOINT, CHECKPOINT_START -> {
                SparkCheckpoint checkpoint = new SparkCheckpoint(CheckpointFiles.open(b.ref(), settings));
                SparkCheckpoint.Positions p = b.kind() == Bound.External.Kind.CHECKPOINT ? checkpoint.stopped(name)
                        : checkpoint.started(name);
                offsets = p.offsets();
                said.addAll(p.notes());
                origin = b.kind() == Bound.External.Kind.CHECKPOINT ? "where the checkpoint's query stopped"
                        : "where the checkpoint's query started";
            }
            case CONNECT -> {
                String url = settings.get(BackfillRequest.CONNECT_URL);
                if (url != null) {
                    offsets = ConnectOffsets.of(url, b.ref(), name);
                    origin = "Kafka Connect sink " + b.ref() + "'s committed offset";
                    said.add("read from Kafka Connect at " + url + " (GET /connectors/" + b.ref() + "/offsets): "
                            + "the connector and its group are unchanged");
                    requireSome(option, b, offsets, "Kafka Connect sink " + b.ref() + " has no committed offset on "
                            + "topic " + name + " (a connector of other topics, or one that committed nothing yet)");
                } else {
                    String group = "connect-" + b.ref();
                    offsets = new TreeMap<>(source.committedOffsets(group, name));
                    origin = "group " + group + "'s committed offset";
                    said.add("Kafka Connect sink " + b.ref() + " commits in group " + group + " (unless its "
                            + "consumer.override.group.id names another: then use group:THAT, or " + CONNECT_URL + " to "
                            + "ask the worker)");
                    requireSome(option, b, offsets, "group " + group + " has no committed offset on topic " + name
                            + " (a misspelt name, a connector whose consumer.override.group.id names another group: "
                            + "ask its worker with " + CONNECT_URL + ", or offsets expired after offsets.retention.minutes)");
                    said.add("read from group " + group + " without joining it: its offsets and members are unchanged");
                }
            }
            case GROUP -> {
                String group = b.ref();
                offsets = new TreeMap<>(source.committedOffsets(group, name));
                origin = "group " + group + "'s committed offset";
                requireSome(option, b, offsets, "group " + group + " has no committed offset on topic " + name
                        + " (a misspelt name, a group that never committed, or offsets expired after "
                        + "offsets.retention.minutes)");
                said.add("read from group " + group + " without joining it: its offsets and members are unchanged");
            }
            default -> throw new IllegalStateException(b.kind().toString());
        }
        return new Positions(offsets, origin, said);
    }

    /**
     * As {@link #resolve(String, Bound.External, TopicInfo, OffsetSource)}, reaching the reader with {@code settings}
     * (a request's {@link BackfillRequest#readers()}): a checkpoint's filesystem settings, a Kafka Connect worker's
     * REST address ({@value BackfillRequest#CONNECT_URL}).
     */
    public static Materialized resolve(String option, Bound.External b, TopicInfo topic, OffsetSource source,
                                       Map<String, String> settings) {
        String name = topic.topic();
        Positions read = positions(option, b, name, source, settings);
        SortedMap<Integer, Long> offsets = read.offsets();
        List<String> said = read.said();
        String origin = read.origin();
        SortedMap<Integer, Bound> positions = new TreeMap<>();
        Map<Integer, List<Note>> partitionNotes = new HashMap<>();
        List<Integer> missing = new ArrayList<>();
        for (int p : topic.partitions()) {
            Long o = offsets.get(p);
            List<Note> notes = partitionNotes.computeIfAbsent(p, x -> new ArrayList<>());
            if (o != null) {
                positions.put(p, o == -2 ? new Bound.Earliest() : o == -1 ? new Bound.Latest() : new Bound.AtOffset(o));
                notes.add(new Note(Note.Kind.READER_POSITION, option + " at offset " + o + ": " + origin));
            } else if (b.fallback().isPresent()) {
                positions.put(p, b.fallback().get());
                notes.add(new Note(Note.Kind.READER_POSITION, option + ": no position for this partition in "
                        + b.kind().prefix + ":" + b.ref() + ", so the fallback " + describe(b.fallback().get())));
            } else if (b.kind() == Bound.External.Kind.CHECKPOINT || b.kind() == Bound.External.Kind.CHECKPOINT_START) {
                // a partition the query never knew (added since): Spark's Kafka source reads a new one from earliest
                positions.put(p, new Bound.Earliest());
                notes.add(new Note(Note.Kind.READER_POSITION, option + ": the checkpoint has no offset for this "
                        + "partition (added since the query last planned a batch?), so earliest, where Spark reads a "
                        + "new partition from"));
            } else {
                missing.add(p);
            }
        }
        if (!missing.isEmpty()) {
            throw new RequestException("invalid " + option + " '" + b.kind().prefix + ":" + b.ref() + "': partitions "
                    + PartitionFilter.format(new TreeSet<>(missing)) + " of topic " + name + " have no " + origin
                    + "; give their bound, e.g. " + b.kind().prefix + ":" + b.ref() + ",earliest");
        }
        List<Note> notes = new ArrayList<>();
        said.forEach(s -> notes.add(new Note(Note.Kind.READER_POSITION, option + ": " + s)));
        TreeSet<Integer> gone = new TreeSet<>(offsets.keySet());
        gone.removeAll(topic.partitions());
        if (!gone.isEmpty()) {
            notes.add(new Note(Note.Kind.READER_POSITION, option + ": positions of partitions "
                    + PartitionFilter.format(gone) + " that topic " + name + " no longer has were left out"));
        }
        return new Materialized(new Bound.PerPartition(name, positions), partitionNotes, notes);
    }

    /**
     * Refuses positions a reader cannot hold on this topic: an offset beyond a partition's end (its high watermark,
     * what any reader could have read). The topic was deleted and recreated, or truncated, since the reader read it:
     * its positions are another log's, and a bound made of them would read nothing, or the wrong records, without a
     * word. (Spark's query itself stops there with a data-loss error.)
     *
     * @param ends each partition's end for a reader that reads uncommitted records (the high watermark)
     * @throws RequestException naming the reader, the partitions, their positions and ends
     */
    public static void requireWithinLog(String option, Bound.External b, Materialized m, String topic,
                                        Map<Integer, Long> ends) {
        List<String> beyond = new ArrayList<>();
        m.bound().positions().forEach((p, bound) -> {
            Long end = ends.get(p);
            if (bound instanceof Bound.AtOffset at && end != null && at.offset() > end) {
                beyond.add("partition " + p + " at offset " + at.offset() + ", its end " + end);
            }
        });
        if (beyond.isEmpty()) {
            return;
        }
        String who = switch (b.kind()) {
            case CHECKPOINT, CHECKPOINT_START -> "the checkpoint's query stands";
            case GROUP -> "group " + b.ref() + " stands";
            case CONNECT -> "Kafka Connect sink " + b.ref() + " stands";
        };
        throw new RequestException("invalid " + option + " '" + b.kind().prefix + ":" + b.ref() + "': " + who
                + " beyond the end of topic " + topic + " (" + String.join("; ", beyond) + "): the topic was deleted "
                + "and recreated, or truncated, since it read there, so these positions are not this topic's"
                + (b.kind() == Bound.External.Kind.CHECKPOINT || b.kind() == Bound.External.Kind.CHECKPOINT_START
                ? " (the query itself would stop here with a data-loss error)" : "")
                + "; give bounds of the topic as it is now, e.g. " + option + " earliest");
    }

    /**
     * The topics the reader {@code b} has positions on: a checkpoint's query's topics, a group's or a Connect sink's
     * committed topics. For a command that names no topic: one is what it is about.
     */
    public static java.util.SortedSet<String> topics(Bound.External b, OffsetSource source,
                                                     Map<String, String> settings) {
        return switch (b.kind()) {
            case CHECKPOINT, CHECKPOINT_START -> new SparkCheckpoint(CheckpointFiles.open(b.ref(), settings)).topics();
            case GROUP -> source.committedTopics(b.ref());
            case CONNECT -> settings.containsKey(BackfillRequest.CONNECT_URL)
                    ? ConnectOffsets.topics(settings.get(BackfillRequest.CONNECT_URL), b.ref())
                    : source.committedTopics("connect-" + b.ref());
        };
    }

    private static void requireSome(String option, Bound.External b, Map<Integer, Long> offsets, String why) {
        if (offsets.isEmpty() && b.fallback().isEmpty()) {
            throw new RequestException("invalid " + option + " '" + b.kind().prefix + ":" + b.ref() + "': " + why
                    + "; give the bound of partitions without one, e.g. " + b.kind().prefix + ":" + b.ref()
                    + ",earliest");
        }
    }

    private static String describe(Bound b) {
        if (b instanceof Bound.AtOffset at) {
            return "offset:" + at.offset();
        }
        return b instanceof Bound.Latest ? "latest" : "earliest";
    }
}
