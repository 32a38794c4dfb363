package dev.kbackfill.resolver;

import static dev.kbackfill.resolver.Wording.Term.*;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

import org.apache.kafka.common.IsolationLevel;

/**
 * Turns a {@link BackfillRequest} into a {@link Plan}.
 *
 * <p>For every selected partition it snapshots the log start and end offsets <em>first</em> (the end at the
 * request's isolation level: the last stable offset under read_committed), then looks up times, and clamps
 * every result into {@code [logStart, end]}. A time T resolves to the first offset whose record timestamp is
 * at or after T. Every adjustment becomes a {@link Note}.
 *
 * <pre>{@code
 * try (KafkaOffsetSource kafka = KafkaOffsetSource.create(Map.of("bootstrap.servers", "localhost:9092"))) {
 *     Plan plan = new RangeResolver(kafka).resolve(
 *             BackfillRequest.builder("orders").from("2024-01-01").to("2024-01-02").build());
 *     for (PartitionRange r : plan.partitions()) {
 *         System.out.printf("%d: [%d, %d)%n", r.partition(), r.start(), r.end());
 *     }
 * }
 * }</pre>
 */
public final class RangeResolver {

    private final OffsetSource source;
    private final Clock clock;
    private final TopicInfo described;
    private final Archive archive;

    public RangeResolver(OffsetSource source, Clock clock) {
        this(source, clock, null, null);
    }

    private RangeResolver(OffsetSource source, Clock clock, TopicInfo described, Archive archive) {
        this.source = source;
        this.clock = clock;
        this.described = described;
        this.archive = archive;
    }

    /**
     * This resolver, planning ranges that start below the log start from {@code archive}: {@code earliest} is the
     * archive's first offset, an offset or a time below the log start resolves in the archive, and each range notes
     * which offsets come from the archive and which from the topic (they meet at the log start at plan time; an
     * overlap is read once, from the topic). Offsets in neither (the archive ends below the log start) are lost for
     * good: refused unless the request allows loss.
     */
    public RangeResolver withArchive(Archive archive) {
        return new RangeResolver(source, clock, described, java.util.Objects.requireNonNull(archive, "archive"));
    }

    /**
     * This resolver, told the topic as the caller described it a moment ago through the same source: the plan uses
     * that description (topic id, partitions, timestamp type) instead of asking again, one round trip less (a run
     * describes the topic while its sink opens). Other topics are still asked for.
     */
    public RangeResolver describedAs(TopicInfo topic) {
        return new RangeResolver(source, clock, topic, archive);
    }

    /** A resolver that asks {@code source} and measures relative times from {@link #systemClock()}. */
    public RangeResolver(OffsetSource source) {
        this(source, systemClock());
    }

    /**
     * The clock requests are resolved by: the system's, or the instant the system property {@code kbackfill.now}
     * gives (ISO-8601, e.g. {@code 2024-01-03T01:30:00Z}) to resolve as of that moment: what a scheduled job's
     * calendar and relative bounds would have been then (a rehearsal of a schedule, a plan reproduced).
     */
    public static Clock systemClock() {
        String now = System.getProperty("kbackfill.now");
        if (now == null || now.isBlank()) {
            return Clock.systemUTC();
        }
        try {
            return Clock.fixed(java.time.Instant.parse(now.strip()), java.time.ZoneOffset.UTC);
        } catch (java.time.format.DateTimeParseException e) {
            throw new RequestException("invalid kbackfill.now '" + now + "': expected an instant, e.g. "
                    + "2024-01-03T01:30:00Z");
        }
    }

    /**
     * Resolves the request against the cluster.
     *
     * @throws RequestException    for a request that cannot be planned (unknown topic or partition, from after
     *                             to); no Kafka lookup is made for a request that is wrong on its face
     * @throws DataLossException   if a range starts below the log start and the request does not allow loss
     * @throws ResolutionException if the cluster cannot be asked
     */
    public Plan resolve(BackfillRequest request) {
        if (request.from() instanceof Bound.Continue c) {
            // a job's first run, or a plan made outside a job: from the first run's start
            return resolve(request, request.withFrom(c.first()), null);
        }
        return resolve(request, request, null);
    }

    /**
     * Bounds read from another reader (a Spark checkpoint, a consumer group) become the offsets they stand for,
     * read once, and the plan says per partition where each came from.
     */
    private Plan resolve(BackfillRequest original, BackfillRequest request, Map<Integer, Long> continueFrom) {
        if (!(request.from() instanceof Bound.External) && !(request.to() instanceof Bound.External)) {
            return resolveOffsets(original, request, continueFrom);
        }
        TopicInfo topic = describe(request.topic());
        List<ReaderPositions.Materialized> read = new ArrayList<>();
        BackfillRequest r = request;
        Map<Integer, Long> ends = source.endOffsets(request.topic(), topic.partitions(), IsolationLevel.READ_UNCOMMITTED);
        if (request.from() instanceof Bound.External from) {
            ReaderPositions.Materialized m = ReaderPositions.resolve(FROM.toString(), from, topic, source,
                    request.readers());
            ReaderPositions.requireWithinLog(FROM.toString(), from, m, request.topic(), ends);
            read.add(m);
            r = r.withFrom(m.bound());
        }
        if (request.to() instanceof Bound.External to) {
            ReaderPositions.Materialized m = ReaderPositions.resolve(TO.toString(), to, topic, source,
                    request.readers());
            ReaderPositions.requireWithinLog(TO.toString(), to, m, request.topic(), ends);
            read.add(m);
            r = r.withTo(m.bound());
        }
        Plan plan = resolveOffsets(original, r, continueFrom);
        List<PartitionRange> ranges = new ArrayList<>();
        for (PartitionRange pr : plan.partitions()) {
            List<Note> notes = new ArrayList<>();
            read.forEach(m -> notes.addAll(m.partitionNotes().getOrDefault(pr.partition(), List.of())));
            notes.addAll(pr.notes());
            ranges.add(new PartitionRange(pr.partition(), pr.start(), pr.end(), pr.logStart(), pr.logEnd(),
                    pr.startTime(), notes));
        }
        List<Note> notes = new ArrayList<>();
        read.forEach(m -> notes.addAll(m.notes()));
        notes.addAll(plan.notes());
        return new Plan(plan.request(), plan.resolvedAt(), plan.fromTime(), plan.toTime(), plan.clusterId(),
                plan.topicId(), plan.timestampType(), ranges, notes);
    }

    /**
     * Resolves a {@code --from continue:FIRST} request for a job's next run: each partition of {@code previous} from
     * where that plan ended, a partition it did not have from its earliest offset; {@code to} as requested.
     *
     * @param previous the plan of the job's previous (complete) run
     * @throws RequestException when the topic was recreated since (another topic id): the previous ends mean nothing;
     *                          or when a partition's log now ends below where the previous run ended (the log was
     *                          truncated, e.g. by an unclean leader election): what the previous run read is no longer
     *                          the log, as {@link PlanCheck} refuses a stored plan that reaches past the end
     */
    public Plan resolveContinuing(BackfillRequest request, Plan previous) {
        if (!(request.from() instanceof Bound.Continue)) {
            return resolve(request);
        }
        TopicInfo topic = describe(request.topic());
        if (!topic.topicId().equals(previous.topicId())) {
            throw new RequestException("topic " + request.topic() + " has topic id " + topic.topicId()
                    + ", not " + previous.topicId() + " as when the job's previous run ended: it was recreated, so "
                    + "a continue: bound has nowhere to continue from; reset the job to start again from its first bound");
        }
        Map<Integer, Long> ends = new java.util.HashMap<>();
        previous.partitions().forEach(r -> {
            if (topic.partitions().contains(r.partition())) {
                ends.put(r.partition(), r.end());
            }
        });
        Map<Integer, Long> now = source.endOffsets(request.topic(), ends.keySet(), request.isolationLevel());
        List<String> truncated = new ArrayList<>();
        new java.util.TreeMap<>(ends).forEach((p, e) -> {
            Long end = now.get(p);
            if (end != null && end < e) {
                truncated.add("partition " + p + " ends at offset " + end + ", below " + e);
            }
        });
        if (!truncated.isEmpty()) {
            throw new RequestException("topic " + request.topic() + " was truncated below where the job's previous run "
                    + "ended (" + String.join("; ", truncated) + "): records it read are gone from the log (an unclean "
                    + "leader election?), so a continue: bound has nowhere to continue from; reset the job, or run the "
                    + "range again with explicit offsets");
        }
        return resolve(request, request.withFrom(new Bound.Earliest()), ends);
    }

    /**
     * @param original    the request as given (the plan's)
     * @param request     the request resolved: {@code original} with a continue bound replaced
     * @param continueFrom per partition where a previous run ended, or null
     */
    private Plan resolveOffsets(BackfillRequest original, BackfillRequest request, Map<Integer, Long> continueFrom) {
        // Kafka timestamps are milliseconds; so is the moment relative times are measured from.
        Instant now = clock.instant().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        request.validate(now);
        // Nearly every plan checks a time lookup or reads a first record; the client for that can be made while the
        // cluster answers the questions below (over 1,000 partitions, a third of a cold plan's time).
        source.prepareCheck(request.topic(), request.isolationLevel());
        TopicInfo topic = describe(request.topic());
        SortedSet<Integer> selected = selectPartitions(request, topic);
        String name = request.topic();
        IsolationLevel isolation = request.isolationLevel();

        // Snapshot the offsets before any time lookup, so that every time result can be clamped into them.
        Map<Integer, Long> topicStart = source.logStartOffsets(name, selected);
        // where an archive holds what retention deleted, a partition's log starts at the archive's first offset
        Map<Integer, Archive.Extent> archived = archivedBelow(name, selected, topicStart);
        Map<Integer, Long> logStart = new java.util.HashMap<>(topicStart);
        archived.forEach((p, e) -> logStart.put(p, e.first()));
        // The high watermark is read before the last stable offset: if the LSO read after it is still lower,
        // a transaction was open at that moment.
        Map<Integer, Long> highWatermark = isolation == IsolationLevel.READ_COMMITTED
                ? source.endOffsets(name, selected, IsolationLevel.READ_UNCOMMITTED) : Map.of();
        Map<Integer, Long> end = source.endOffsets(name, selected, isolation);

        Optional<Instant> fromTime = request.from().instant(now);
        Optional<Instant> toTime = request.to().instant(now);
        Map<Integer, TimeLookup> fromHits = fromTime
                .map(t -> inArchive(name, lookUpTime(name, selected, t, end, isolation), archived, topicStart))
                .orElse(Map.of());
        Map<Integer, TimeLookup> toHits = toTime
                .map(t -> inArchive(name, lookUpTime(name, selected, t, end, isolation), archived, topicStart))
                .orElse(Map.of());
        // The first record a reader sees of a partition names the start time of a range that starts at the log
        // start, and tells whether --from is older than what retention kept. Reading it costs a fetch per
        // partition, so it is read only where the time lookups did not already answer either question.
        Map<Integer, PartitionRange> resolved = new java.util.TreeMap<>();
        Map<Integer, Snapshot> unanswered = new java.util.HashMap<>();
        for (int p : selected) {
            Snapshot s = new Snapshot(p, require(logStart, p, "log start"), require(end, p, "end"),
                    Optional.ofNullable(highWatermark.get(p)), Optional.empty());
            PartitionRange r = resolvePartition(original, request, s, fromTime, fromHits.get(p), toTime, toHits.get(p),
                    continueFrom);
            resolved.put(p, r);
            if (archived.containsKey(p)) {
                continue; // Kafka cannot read the log start an archive gives; the archive's hits name start times
            }
            if ((r.start() < r.end() && r.startTime().isEmpty())
                    || (fromTime.isPresent() && s.logStart() > 0 && mayPrecedeRetained(fromHits.get(p), s))) {
                unanswered.put(p, s);
            }
        }
        if (!unanswered.isEmpty()) {
            Map<Integer, Long> from = new java.util.HashMap<>();
            unanswered.forEach((p, s) -> from.put(p, s.logStart()));
            Map<Integer, OffsetSource.TimestampedOffset> firstRecords =
                    source.firstVisibleAtOrAfter(name, from, end, Instant.EPOCH, isolation);
            // only these partitions change: the others resolved without a first record and would again
            unanswered.forEach((p, s) -> resolved.put(p, resolvePartition(original, request, new Snapshot(p, s.logStart(),
                    s.end(), s.highWatermark(), Optional.ofNullable(firstRecords.get(p))), fromTime, fromHits.get(p),
                    toTime, toHits.get(p), continueFrom)));
        }
        List<PartitionRange> ranges = remote(topic, selected, new ArrayList<>(resolved.values()));
        ranges = seams(request, ranges, archived, topicStart, fromTime.isPresent() || toTime.isPresent());
        return new Plan(original, now, fromTime, toTime, topic.clusterId(), topic.topicId(), topic.timestampType(),
                ranges, topicNotes(topic, fromTime, toTime, now));
    }

    /**
     * On a topic with tiered storage, a note on each partition whose range begins below the first offset its leader
     * keeps on local disk: how much of the range the broker reads from remote storage.
     */
    private List<PartitionRange> remote(TopicInfo topic, SortedSet<Integer> selected, List<PartitionRange> ranges) {
        if (!topic.remoteStorage()) {
            return ranges;
        }
        Map<Integer, Long> local = source.localLogStartOffsets(topic.topic(), selected);
        List<PartitionRange> noted = new ArrayList<>();
        for (PartitionRange r : ranges) {
            Long l = local.get(r.partition());
            if (l == null || r.isEmpty() || r.start() >= l) {
                noted.add(r);
                continue;
            }
            long remoteEnd = Math.min(r.end(), l);
            List<Note> notes = new ArrayList<>(r.notes());
            notes.add(new Note(Note.Kind.REMOTE_STORAGE, "offsets " + r.start() + " to " + remoteEnd + " ("
                    + (remoteEnd - r.start()) + " of the range's " + r.span() + ") are in tiered storage, below "
                    + "offset " + l + ", the first the broker keeps on local disk: it reads them from the remote "
                    + "store, slower than local segments and at the store's request and transfer cost"));
            noted.add(new PartitionRange(r.partition(), r.start(), r.end(), r.logStart(), r.logEnd(), r.startTime(),
                    notes));
        }
        return noted;
    }

    /**
     * What the archive holds of each partition whose log retention has deleted a start of (the archive's first offset
     * below the log start); none without an archive.
     */
    private Map<Integer, Archive.Extent> archivedBelow(String topic, SortedSet<Integer> selected,
                                                      Map<Integer, Long> logStart) {
        if (archive == null) {
            return Map.of();
        }
        Map<Integer, Archive.Extent> below = new java.util.TreeMap<>();
        archive.extents(topic, selected).forEach((p, e) -> {
            Long start = logStart.get(p);
            if (start != null && e.first() < start) {
                below.put(p, e);
            }
        });
        return below;
    }

    /**
     * The time lookups, each answered in the archive where the topic's answer is its log start (or none) and the
     * archive's records carry timestamps: the first archived record at or after the time, below the log start.
     */
    private Map<Integer, TimeLookup> inArchive(String topic, Map<Integer, TimeLookup> hits,
                                               Map<Integer, Archive.Extent> archived, Map<Integer, Long> topicStart) {
        if (archived.isEmpty()) {
            return hits;
        }
        Map<Integer, TimeLookup> answered = new java.util.HashMap<>(hits);
        archived.forEach((p, e) -> {
            TimeLookup hit = hits.get(p);
            long start = topicStart.get(p);
            if (hit == null || !e.timestamps()
                    || (hit.listed().isPresent() && hit.listed().get().offset() > start)) {
                return;
            }
            archive.firstAtOrAfter(topic, p, hit.time(), Math.min(start, e.end())).ifPresent(a ->
                    answered.put(p, new TimeLookup(hit.time(), Optional.of(a), Optional.of(a))));
        });
        return answered;
    }

    /**
     * Each range that reads archived offsets, with the topic's log start (the seam) as its log start and a note of
     * what comes from where; a hole between archive and topic is refused, or noted where loss is allowed; inferred
     * offsets are refused unless allowed.
     */
    private List<PartitionRange> seams(BackfillRequest request, List<PartitionRange> ranges,
                                       Map<Integer, Archive.Extent> archived, Map<Integer, Long> topicStart,
                                       boolean timeBounds) {
        if (archived.isEmpty()) {
            return ranges;
        }
        List<PartitionRange> seamed = new ArrayList<>();
        List<String> holes = new ArrayList<>();
        for (PartitionRange r : ranges) {
            Archive.Extent e = archived.get(r.partition());
            if (e == null) {
                seamed.add(r);
                continue;
            }
            long seam = topicStart.get(r.partition());
            List<Note> notes = new ArrayList<>(r.notes());
            long fromArchive = Math.min(r.end(), Math.min(seam, e.end()));
            if (r.start() < fromArchive) {
                if (!e.exactOffsets() && !request.allowInferredOffsets()) {
                    throw new RequestException("partition " + r.partition() + ": offsets " + r.start() + " to "
                            + (fromArchive - 1) + " would be read from " + archive.location() + " (" + archive.layout()
                            + "), whose records carry no offsets: each is inferred as its file's start offset plus its "
                            + "index, which holds only where the archived log had no gaps (not compacted, no "
                            + "transactions); pass " + Wording.Term.ALLOW_INFERRED_OFFSETS + " if it had none");
                }
                notes.add(new Note(Note.Kind.ARCHIVED, archivedNote(r, e, seam, fromArchive)));
            }
            long holeStart = Math.max(r.start(), e.end());
            long holeEnd = Math.min(r.end(), seam);
            if (holeStart < holeEnd) {
                String hole = "offsets " + holeStart + " to " + (holeEnd - 1) + " are in neither " + archive.location()
                        + " (it ends at " + e.end() + ") nor the topic (its log starts at " + seam + ")";
                if (!request.allowDataLoss()) {
                    holes.add("partition " + r.partition() + ": " + hole);
                }
                notes.add(new Note(Note.Kind.ARCHIVE_HOLE, hole + ": lost for good; data loss allowed, the "
                        + (holeEnd - holeStart) + " offsets are counted as lost"));
            }
            if (timeBounds && !e.timestamps()) {
                notes.add(new Note(Note.Kind.ARCHIVED, archive.location() + "'s records carry no timestamps: time "
                        + "bounds resolve in the topic only, from its log start " + seam));
            }
            seamed.add(new PartitionRange(r.partition(), r.start(), r.end(), seam, r.logEnd(), r.startTime(), notes));
        }
        if (!holes.isEmpty()) {
            throw new DataLossException(String.join("; ", holes) + ": records lost for good; pass "
                    + Wording.Term.ALLOW_DATA_LOSS + " to backfill the rest and count them as lost");
        }
        return seamed;
    }

    private String archivedNote(PartitionRange r, Archive.Extent e, long seam, long fromArchive) {
        StringBuilder note = new StringBuilder("offsets " + r.start() + " to " + (fromArchive - 1) + " ("
                + (fromArchive - r.start()) + ") come from " + archive.location() + " (" + archive.layout() + ", "
                + e.files() + " file(s), offsets " + e.first() + " to " + (e.end() - 1) + ", "
                + (e.exactOffsets() ? "exact offsets" : "offsets inferred from file names") + ")");
        long topicFrom = Math.max(r.start(), seam);
        if (topicFrom < r.end()) {
            note.append(", offsets ").append(topicFrom).append(" to ").append(r.end() - 1)
                    .append(" from the topic; they meet at the log start ").append(seam);
        }
        if (e.end() > seam && r.end() > seam) {
            note.append("; the archive's offsets ").append(seam).append(" to ").append(Math.min(e.end(), r.end()) - 1)
                    .append(" are in the topic too and are read once, from the topic");
        }
        return note.toString();
    }

    /**
     * Looks a time up with ListOffsets, then checks each answer against what a reader sees: a transaction
     * marker (stamped with the broker's clock) or an aborted record can be the first offset at or after a time,
     * and no reader ever sees either.
     */
    private Map<Integer, TimeLookup> lookUpTime(String topic, SortedSet<Integer> partitions, Instant time,
                                                Map<Integer, Long> end, IsolationLevel isolation) {
        Map<Integer, OffsetSource.TimestampedOffset> listed = source.offsetsForTime(topic, partitions, time, isolation);
        Map<Integer, Long> checkFrom = new java.util.HashMap<>();
        listed.forEach((p, hit) -> checkFrom.put(p, hit.offset()));
        Map<Integer, OffsetSource.TimestampedOffset> visible = checkFrom.isEmpty() ? Map.of()
                : source.firstVisibleAtOrAfter(topic, checkFrom, end, time, isolation);
        Map<Integer, TimeLookup> result = new java.util.HashMap<>();
        for (int p : partitions) {
            result.put(p, new TimeLookup(time, Optional.ofNullable(listed.get(p)), Optional.ofNullable(visible.get(p))));
        }
        return result;
    }

    /**
     * Whether the first retained record may be newer than {@code --from} (the "older than the retained records"
     * note). ListOffsets answers the first offset whose timestamp is at or after the time, so when it answers an
     * offset above the log start, the record at the log start is older than the time and the note does not apply;
     * only an answer at the log start, or none, needs the first record read. (A log start holding only
     * transaction markers or aborted records, which no reader sees, is not looked through for the note.)
     */
    private static boolean mayPrecedeRetained(TimeLookup fromHit, Snapshot s) {
        return fromHit == null || fromHit.listed().isEmpty() || fromHit.listed().get().offset() <= s.logStart();
    }

    /** A time lookup on one partition: what ListOffsets answered, and the first record a reader sees from there. */
    private record TimeLookup(Instant time, Optional<OffsetSource.TimestampedOffset> listed,
                              Optional<OffsetSource.TimestampedOffset> visible) {
    }

    /** What the cluster said about one partition before any time lookup. */
    private record Snapshot(int partition, long logStart, long end, Optional<Long> highWatermark,
                            Optional<OffsetSource.TimestampedOffset> firstRecord) {
    }

    private enum Side {
        FROM(Wording.Term.FROM), TO(Wording.Term.TO);

        final String option;

        Side(Wording.Term option) {
            this.option = option.toString();
        }
    }

    private PartitionRange resolvePartition(BackfillRequest original, BackfillRequest request, Snapshot s,
                                            Optional<Instant> fromTime, TimeLookup fromHit,
                                            Optional<Instant> toTime, TimeLookup toHit, Map<Integer, Long> continueFrom) {
        List<Note> notes = new ArrayList<>();
        int p = s.partition();
        Bound from = continueFrom == null ? boundFor(request.from(), p)
                : continueFrom.containsKey(p) ? new Bound.AtOffset(continueFrom.get(p)) : new Bound.Earliest();
        Bound to = boundFor(request.to(), p);
        long start = resolveSide(Side.FROM, request.fromText(), from, fromTime, fromHit, s, request, notes);
        long end = resolveSide(Side.TO, request.toText(), to, toTime, toHit, s, request, notes);
        if (start > end) {
            boolean readers = original.from() instanceof Bound.External || original.to() instanceof Bound.External;
            if (isOffsetKind(from) && isOffsetKind(to) && !readers) {
                throw new RequestException("partition " + p + ": " + FROM + " '" + request.fromText()
                        + "' resolves to offset " + start + ", after " + TO + " '" + request.toText() + "' at offset " + end
                        + "; the range is [from, to)");
            }
            notes.add(new Note(Note.Kind.FROM_AFTER_TO, FROM + " '" + request.fromText() + "' resolves to offset "
                    + start + ", after " + TO + " '" + request.toText() + "' at offset " + end
                    + " on this partition: nothing to read here"));
            end = start;
        }
        if (s.logStart() == s.end()) {
            // "no record at or after the time" says nothing more about a partition that holds none
            notes.removeIf(n -> n.kind() == Note.Kind.NO_RECORD_AT_OR_AFTER_FROM
                    || n.kind() == Note.Kind.NO_RECORD_AT_OR_AFTER_TO);
            notes.add(new Note(Note.Kind.EMPTY_PARTITION, "the partition holds no records (log start = end = "
                    + s.end() + ")"));
        }
        if (fromTime.isPresent() && s.logStart() > 0 && s.firstRecord().isPresent()
                && fromTime.get().isBefore(s.firstRecord().get().timestamp())) {
            notes.add(new Note(Note.Kind.RANGE_OLDER_THAN_RETAINED, FROM + " " + fromTime.get()
                    + " is older than the first retained record (offset " + s.firstRecord().get().offset() + " at "
                    + s.firstRecord().get().timestamp() + "), and offsets below " + s.logStart()
                    + " were deleted: retention may have removed part of the range"));
        }
        if (s.highWatermark().isPresent() && s.highWatermark().get() > s.end()) {
            notes.add(new Note(Note.Kind.OPEN_TRANSACTION, "an open transaction holds the last stable offset at "
                    + s.end() + " below the high watermark " + s.highWatermark().get()
                    + ": the range ends at " + s.end() + " because read_committed cannot read past it"));
        }
        return new PartitionRange(p, start, end, s.logStart(), s.end(), startTime(start, end, fromHit, s), notes);
    }

    private static Optional<Instant> startTime(long start, long end, TimeLookup fromHit, Snapshot s) {
        if (start == end) {
            return Optional.empty();
        }
        if (fromHit != null && fromHit.visible().isPresent() && fromHit.visible().get().offset() == start) {
            return Optional.of(fromHit.visible().get().timestamp());
        }
        return s.firstRecord().filter(f -> f.offset() == start).map(OffsetSource.TimestampedOffset::timestamp);
    }

    private static long resolveSide(Side side, String text, Bound bound, Optional<Instant> time,
                                    TimeLookup lookup, Snapshot s, BackfillRequest request, List<Note> notes) {
        int p = s.partition();
        if (bound instanceof Bound.Earliest) {
            return s.logStart();
        }
        if (bound instanceof Bound.Latest) {
            return s.end();
        }
        if (bound instanceof Bound.AtOffset at) {
            long offset = at.offset();
            if (offset < s.logStart()) {
                String what = side == Side.FROM
                        ? "offsets " + offset + " to " + (s.logStart() - 1) + " were deleted (retention or deleteRecords)"
                        : "the whole range lies below it: those records were deleted (retention or deleteRecords)";
                if (!request.allowDataLoss()) {
                    throw new DataLossException("partition " + p + ": " + side.option + " offset " + offset
                            + " is below the log start offset " + s.logStart() + "; " + what
                            + "; pass " + ALLOW_DATA_LOSS + " to backfill what is left from " + s.logStart());
                }
                notes.add(new Note(side == Side.FROM ? Note.Kind.START_LOST_TO_RETENTION : Note.Kind.END_LOST_TO_RETENTION,
                        side.option + " offset " + offset + " is below the log start offset " + s.logStart() + "; "
                                + what + "; data loss allowed, clamped to " + s.logStart()));
                return s.logStart();
            }
            if (offset > s.end()) {
                notes.add(new Note(Note.Kind.OFFSET_BEYOND_END, side.option + " offset " + offset
                        + " lies beyond the end offset " + s.end() + "; clamped to " + s.end()));
                return s.end();
            }
            return offset;
        }
        Instant t = time.orElseThrow(() -> new IllegalStateException("no time for " + bound));
        Optional<OffsetSource.TimestampedOffset> listed = lookup.listed().filter(h -> h.offset() < s.end());
        Optional<OffsetSource.TimestampedOffset> visible = lookup.visible().filter(h -> h.offset() < s.end());
        if (listed.isPresent() && (visible.isEmpty() || visible.get().offset() != listed.get().offset())) {
            notes.add(new Note(Note.Kind.TIME_LOOKUP_HIT_INVISIBLE, "ListOffsets answered offset "
                    + listed.get().offset() + " (stamped " + listed.get().timestamp() + ") for " + side.option + " " + t
                    + ", but no reader sees a record there (a transaction marker or an aborted record); "
                    + visible.map(v -> "the first record a reader sees at or after that time is at offset " + v.offset())
                    .orElse("no record a reader sees lies at or after that time")));
        }
        if (visible.isEmpty()) {
            Note.Kind kind = side == Side.FROM ? Note.Kind.NO_RECORD_AT_OR_AFTER_FROM : Note.Kind.NO_RECORD_AT_OR_AFTER_TO;
            String consequence = side == Side.FROM
                    ? "the range is empty"
                    : "the range runs to the end offset; records written later with earlier times are not in it";
            notes.add(new Note(kind, "no record at or after " + side.option + " " + t + " below the end offset "
                    + s.end() + ": " + consequence));
            return s.end();
        }
        return Math.max(visible.get().offset(), s.logStart());
    }

    private static boolean isOffsetKind(Bound b) {
        return b instanceof Bound.Earliest || b instanceof Bound.Latest || b instanceof Bound.AtOffset;
    }

    private static Bound boundFor(Bound bound, int partition) {
        if (bound instanceof Bound.PerPartition pp) {
            Bound b = pp.positions().get(partition);
            if (b == null) {
                throw new RequestException("partition " + partition + " is selected but the Spark JSON names only "
                        + "partitions " + PartitionFilter.format(new TreeSet<>(pp.positions().keySet())));
            }
            return b;
        }
        return bound;
    }

    private static SortedSet<Integer> selectPartitions(BackfillRequest request, TopicInfo topic) {
        SortedSet<Integer> selected;
        if (request.partitions().isPresent()) {
            selected = request.partitions().get();
        } else if (request.from() instanceof Bound.PerPartition pp) {
            selected = new TreeSet<>(pp.positions().keySet());
        } else if (request.to() instanceof Bound.PerPartition pp) {
            selected = new TreeSet<>(pp.positions().keySet());
        } else {
            return topic.partitions();
        }
        for (int p : selected) {
            if (!topic.partitions().contains(p)) {
                throw new RequestException("partition " + p + " does not exist in topic " + topic.topic()
                        + " (partitions " + PartitionFilter.format(topic.partitions()) + ")");
            }
        }
        return selected;
    }

    private static List<Note> topicNotes(TopicInfo topic, Optional<Instant> fromTime, Optional<Instant> toTime,
                                         Instant now) {
        List<Note> notes = new ArrayList<>();
        if (fromTime.isPresent() || toTime.isPresent()) {
            if (topic.timestampType() == TopicInfo.TimestampType.LOG_APPEND_TIME) {
                notes.add(new Note(Note.Kind.LOG_APPEND_TIME, "topic " + topic.topic() + " uses LogAppendTime: "
                        + "times select records by when the broker appended them, not by event time"));
            } else {
                notes.add(new Note(Note.Kind.CREATE_TIME, "topic " + topic.topic() + " uses CreateTime: a time "
                        + "resolves to the first offset whose producer timestamp is at or after it; producer "
                        + "timestamps may be out of order, so records inside the range can carry times outside it"));
            }
        }
        if (topic.compacted()) {
            StringBuilder msg = new StringBuilder("topic " + topic.topic()
                    + " is compacted: superseded values of a key may be gone from the range");
            Optional<Duration> keep = topic.deleteRetention();
            if (keep.isPresent()) {
                Instant tombstonesKeptSince = now.minus(keep.get());
                if (fromTime.isEmpty() || fromTime.get().isBefore(tombstonesKeptSince)) {
                    msg.append(", and tombstones older than delete.retention.ms (").append(keep.get())
                            .append(") may have been removed, so deletions before ")
                            .append(tombstonesKeptSince).append(" may be missing");
                }
            }
            notes.add(new Note(Note.Kind.COMPACTED_TOPIC, msg.toString()));
        }
        return notes;
    }

    private static long require(Map<Integer, Long> offsets, int partition, String what) {
        Long v = offsets.get(partition);
        if (v == null) {
            throw new IllegalStateException("the cluster did not answer the " + what + " offset of partition "
                    + partition);
        }
        return v;
    }

    private TopicInfo describe(String topic) {
        return described != null && described.topic().equals(topic) ? described : source.describe(topic);
    }
}
