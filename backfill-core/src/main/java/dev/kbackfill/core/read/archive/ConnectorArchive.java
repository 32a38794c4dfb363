package dev.kbackfill.core.read.archive;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.kbackfill.resolver.Archive;
import dev.kbackfill.resolver.OffsetSource;
import dev.kbackfill.resolver.RequestException;

/**
 * A topic archived by a Kafka Connect S3 sink, in either layout in common use:
 * <ul>
 *   <li>Confluent's S3 sink with its default partitioner: {@code [topics/]TOPIC/partition=P/TOPIC+P+START.EXT}, values
 *       in JSON lines ({@code .json}, {@code .json.gz}), Avro container files ({@code .avro}) or Parquet
 *       ({@code .parquet}, {@code .snappy.parquet}, ...), keys in {@code TOPIC+P+START.keys.EXT} and headers in
 *       {@code TOPIC+P+START.headers.EXT} where {@code store.kafka.keys} and {@code store.kafka.headers} wrote them;
 *       records carry no offset, so a record's offset is inferred as its file's start offset plus its index;</li>
 *   <li>Aiven's S3 sink: {@code [PREFIX]TOPIC-P-START[.avro][.gz|.snappy|.zst]} in jsonl, CSV, Avro or Parquet (told
 *       apart by their first bytes), with the {@code key}, {@code value}, {@code offset}, {@code timestamp} and
 *       {@code headers} fields it was configured to write ({@code format.output.fields}; CSV names none, so the
 *       request gives their order): exact offsets where {@code offset} is there.</li>
 * </ul>
 * The archive is indexed once per topic, every file read through: its records counted, its offsets and timestamps
 * checked against its name and its neighbours. A file that does not fit (a name and a folder or a first record that
 * disagree, two files covering one offset, offsets no file holds between two files, a format not read) is a
 * {@link RequestException} naming it: nothing is planned from an archive that is not what it says.
 */
public final class ConnectorArchive implements Archive {

    private static final Pattern PARTITION_DIR = Pattern.compile("partition=(\\d+)");

    private final ArchiveStore store;
    private final List<String> fields;
    private List<String> listing;
    private final Map<String, Index> indexes = new HashMap<>();

    ConnectorArchive(ArchiveStore store, List<String> fields) {
        this.store = store;
        this.fields = fields;
    }

    /**
     * The archive at {@code location}: a local folder, {@code file:///PATH}, or a URL an {@link ArchiveStore.Provider}
     * on the class path serves ({@code s3a://}).
     *
     * @param settings the request's reader settings (the filesystem's)
     * @throws RequestException for a folder that does not exist, or a scheme no provider serves
     */
    public static ConnectorArchive open(String location, Map<String, String> settings) {
        int colon = location.indexOf("://");
        String scheme = colon < 0 ? "file" : location.substring(0, colon).toLowerCase(java.util.Locale.ROOT);
        String csv = settings.get(dev.kbackfill.resolver.BackfillRequest.ARCHIVE_FIELDS);
        List<String> fields = csv == null ? List.of() : dev.kbackfill.resolver.BackfillRequest.archiveFields(csv);
        if (scheme.equals("file")) {
            return new ConnectorArchive(ArchiveStore.local(location), fields);
        }
        // an object store's client is among the libraries a command may start without
        java.util.Optional<ArchiveStore.Provider> provider = dev.kbackfill.resolver.OptionalLibraries.orAdded(() ->
                java.util.ServiceLoader.load(ArchiveStore.Provider.class).stream()
                        .map(java.util.ServiceLoader.Provider::get).filter(p -> p.serves(scheme)).findFirst());
        if (provider.isPresent()) {
            return new ConnectorArchive(provider.get().open(location, settings), fields);
        }
        throw new RequestException("invalid " + dev.kbackfill.resolver.Wording.Term.ARCHIVE + " '" + location
                + "': no archive store serves " + scheme + "://; expected a folder, file:///PATH or s3a://BUCKET/PREFIX");
    }

    /**
     * The archive a request names, if it names one. Indexing reads every file, so the archive is opened once per
     * process for a while ({@link #REUSE}): the command checks it before anything is opened, the plan resolves against
     * it and the run reads it, one index. Files a connector adds meanwhile hold offsets the topic still has.
     */
    public static Optional<ConnectorArchive> of(dev.kbackfill.resolver.BackfillRequest request) {
        return request.archive().map(a -> {
            String key = a + " " + request.readers();
            synchronized (OPENED) {
                OPENED.values().removeIf(o -> System.nanoTime() - o.openedAt > REUSE.toNanos());
                return OPENED.computeIfAbsent(key, k -> open(a, request.readers()));
            }
        });
    }

    /** How long an archive opened by {@link #of} is reused by the same process. */
    static final java.time.Duration REUSE = java.time.Duration.ofMinutes(10);
    private static final Map<String, ConnectorArchive> OPENED = new HashMap<>();
    private final long openedAt = System.nanoTime();

    /** {@code resolver} reading below the log start from the archive {@code request} names, if it names one. */
    public static dev.kbackfill.resolver.RangeResolver resolving(dev.kbackfill.resolver.RangeResolver resolver,
                                                                 dev.kbackfill.resolver.BackfillRequest request) {
        return of(request).map(resolver::withArchive).orElse(resolver);
    }

    @Override
    public String location() {
        return store.location();
    }

    @Override
    public synchronized String layout() {
        return indexes.values().stream().map(i -> i.layout).findFirst().orElse("Kafka Connect S3 sink");
    }

    /** The partitions of {@code topic} the archive holds files of (indexing them: a bad file is refused here). */
    public Set<Integer> partitions(String topic) {
        return java.util.Collections.unmodifiableSet(index(topic).files.keySet());
    }

    @Override
    public Map<Integer, Extent> extents(String topic, Set<Integer> partitions) {
        Map<Integer, Extent> extents = new TreeMap<>();
        index(topic).files.forEach((p, files) -> {
            if (!partitions.contains(p) || files.isEmpty()) {
                return;
            }
            long records = files.stream().mapToLong(Indexed::records).sum();
            extents.put(p, new Extent(files.get(0).first, files.get(files.size() - 1).end, records, files.size(),
                    files.stream().allMatch(Indexed::exact), files.stream().allMatch(Indexed::timed)));
        });
        return extents;
    }

    @Override
    public Optional<OffsetSource.TimestampedOffset> firstAtOrAfter(String topic, int partition, Instant time,
                                                                   long below) {
        long t = time.toEpochMilli();
        for (Indexed f : index(topic).files.getOrDefault(partition, List.of())) {
            if (f.first >= below) {
                break;
            }
            if (f.maxTimestamp < t) {
                continue; // no record of this file is at or after the time
            }
            Optional<ArchivedRecord> hit = first(f.file, r -> r.offset() >= below || r.timestamp() >= t);
            if (hit.isPresent() && hit.get().offset() < below) {
                return Optional.of(new OffsetSource.TimestampedOffset(hit.get().offset(),
                        Instant.ofEpochMilli(hit.get().timestamp())));
            }
        }
        return Optional.empty();
    }

    /** The highest timestamp of {@code partition}'s archived records below {@code offset}, or {@code none}. */
    public long timeBefore(String topic, int partition, long offset, long none) {
        long max = none;
        for (Indexed f : index(topic).files.getOrDefault(partition, List.of())) {
            if (f.first >= offset) {
                break;
            }
            if (f.end <= offset) {
                max = Math.max(max, f.maxTimestamp);
                continue;
            }
            long[] m = {max};
            first(f.file, r -> {
                if (r.offset() >= offset) {
                    return true;
                }
                m[0] = Math.max(m[0], r.timestamp());
                return false;
            });
            max = m[0];
        }
        return max;
    }

    /**
     * Hands {@code partition}'s archived records in {@code [from, to)} to {@code handler}, in offset order; returns
     * early when it answers false.
     */
    public void read(String topic, int partition, long from, long to,
                     java.util.function.Predicate<ArchivedRecord> handler) {
        for (Indexed f : index(topic).files.getOrDefault(partition, List.of())) {
            if (f.end <= from) {
                continue;
            }
            if (f.first >= to) {
                return;
            }
            boolean[] stop = {false};
            first(f.file, r -> {
                if (r.offset() < from) {
                    return false;
                }
                if (r.offset() >= to || !handler.test(r)) {
                    stop[0] = true;
                    return true;
                }
                return false;
            });
            if (stop[0]) {
                return;
            }
        }
    }

    /** The first record of {@code file} {@code until} accepts, reading no further. */
    private Optional<ArchivedRecord> first(ArchiveFile file, java.util.function.Predicate<ArchivedRecord> until) {
        try (ArchiveFile.CloseableIterator it = file.records(store)) {
            while (it.hasNext()) {
                ArchivedRecord r = it.next();
                if (until.test(r)) {
                    return Optional.of(r);
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read archive file " + file.path() + " of " + location() + ": "
                    + e.getMessage(), e);
        }
    }

    /** One file indexed: the offsets it holds {@code [first, end)}. */
    private record Indexed(ArchiveFile file, long first, long end, long records, long maxTimestamp, boolean exact,
                           boolean timed) {
    }

    /** A topic's files per partition, in offset order, and how they were written. */
    private record Index(String layout, Map<Integer, List<Indexed>> files) {
    }

    private synchronized Index index(String topic) {
        Index index = indexes.get(topic);
        if (index == null) {
            index = build(topic);
            indexes.put(topic, index);
        }
        return index;
    }

    private Index build(String topic) {
        List<String> all = listing();
        Map<String, ArchiveFile> confluent = new java.util.LinkedHashMap<>(); // by stem: the path without .EXT
        List<ArchiveFile> aiven = new ArrayList<>();
        Map<String, String> keys = new HashMap<>();
        Map<String, String> headers = new HashMap<>();
        Pattern confluentName = Pattern.compile(Pattern.quote(topic) + "\\+(\\d+)\\+(\\d+)\\.(.+)");
        Pattern aivenName = Pattern.compile(Pattern.quote(topic) + "-(\\d+)-(\\d+)(\\..+)?");
        for (String path : all) {
            String[] parts = path.split("/");
            String name = parts[parts.length - 1];
            boolean inTopicFolder = parts.length >= 3 && parts[parts.length - 3].equals(topic);
            Matcher c = confluentName.matcher(name);
            Matcher a = aivenName.matcher(name);
            if (c.matches()) {
                int p = Integer.parseInt(c.group(1));
                checkFolder(path, parts, p);
                String ext = c.group(3);
                String stem = path.substring(0, path.length() - ext.length() - 1);
                ArchiveFile.Format format = confluentFormat(path, ext);
                if (ext.startsWith("keys.")) {
                    keys.put(stem, path);
                } else if (ext.startsWith("headers.")) {
                    headers.put(stem, path);
                } else {
                    confluent.put(stem, new ArchiveFile(path, p, Long.parseLong(c.group(2)), format, null, null,
                            List.of()));
                }
            } else if (a.matches()) {
                aiven.add(new ArchiveFile(path, Integer.parseInt(a.group(1)), Long.parseLong(a.group(2)),
                        aivenFormat(path, a.group(3)), null, null, fields));
            } else if (inTopicFolder && PARTITION_DIR.matcher(parts[parts.length - 2]).matches()) {
                throw ArchiveFile.bad(path, "does not fit Confluent's layout " + topic + "/partition=P/" + topic
                        + "+P+START.EXT");
            }
        }
        if (!confluent.isEmpty() && !aiven.isEmpty()) {
            throw new RequestException("archive " + location() + " holds files of topic " + topic + " in both "
                    + "Confluent's layout (" + confluent.values().iterator().next().path() + ") and Aiven's ("
                    + aiven.get(0).path()
                    + "): name the folder of one");
        }
        if (confluent.isEmpty() && aiven.isEmpty()) {
            throw new RequestException("archive " + location() + " holds no file of topic " + topic + otherTopics(all)
                    + "; expected Confluent's layout (" + topic + "/partition=P/" + topic + "+P+START.json) or "
                    + "Aiven's (" + topic + "-P-START)");
        }
        boolean keyed = !keys.isEmpty();
        boolean headed = !headers.isEmpty();
        List<ArchiveFile> files = new ArrayList<>();
        for (Map.Entry<String, ArchiveFile> e : confluent.entrySet()) {
            files.add(e.getValue().withCompanions(companion(keys, keyed, e.getKey(), e.getValue(), "keys", topic),
                    companion(headers, headed, e.getKey(), e.getValue(), "headers", topic)));
        }
        for (Map<String, String> orphans : List.of(keys, headers)) {
            if (!orphans.isEmpty()) {
                String orphan = orphans.values().iterator().next();
                throw ArchiveFile.bad(orphan, "holds " + (orphans == keys ? "keys" : "headers") + " of no values "
                        + "file: a values file is missing");
            }
        }
        files.addAll(aiven);
        ArchiveFile first = files.get(0);
        String layout = (first.format().aiven ? "Aiven S3 sink, " : "Confluent S3 sink, ")
                + (first.format() == ArchiveFile.Format.AIVEN_JSONL ? "jsonl" : first.format().encoding.word)
                + (first.format().aiven ? "" : (keyed ? "" : ", no keys") + (headed ? ", headers" : ""));
        return new Index(layout, indexFiles(topic, files));
    }

    /**
     * The keys (or headers) file of {@code stem}, taken out of {@code files}; refused where others have one
     * ({@code any}: the topic's files had one or more).
     */
    private static String companion(Map<String, String> files, boolean any, String stem, ArchiveFile values,
                                    String what, String topic) {
        String file = files.remove(stem);
        if (file == null && any) {
            throw ArchiveFile.bad(values.path(), "has no " + what + " file (" + stem + "." + what + ".*) while other "
                    + "files of " + topic + " have one: a " + what + " file is missing");
        }
        return file;
    }

    private Map<Integer, List<Indexed>> indexFiles(String topic, List<ArchiveFile> files) {
        Map<Integer, List<ArchiveFile>> byPartition = new TreeMap<>();
        files.forEach(f -> byPartition.computeIfAbsent(f.partition(), p -> new ArrayList<>()).add(f));
        Map<Integer, List<Indexed>> indexed = new TreeMap<>();
        byPartition.forEach((p, list) -> {
            list.sort(java.util.Comparator.comparingLong(ArchiveFile::start));
            List<Indexed> out = new ArrayList<>();
            Indexed previous = null;
            for (ArchiveFile f : list) {
                Indexed i = indexFile(f);
                if (previous != null && previous.end > i.first) {
                    throw new RequestException("archive files " + previous.file.path() + " and " + f.path() + " of "
                            + topic + " both cover offset " + i.first + ": one archive holds each offset once");
                }
                if (previous != null && previous.end < i.first) {
                    throw new RequestException("archive " + location() + " has a gap in partition " + p + ": offsets "
                            + previous.end + " to " + (i.first - 1) + " are in no file, between " + previous.file.path()
                            + " and " + f.path() + " (a file missing, or the connector skipped records)");
                }
                out.add(i);
                previous = i;
            }
            indexed.put(p, out);
        });
        return indexed;
    }

    private Indexed indexFile(ArchiveFile f) {
        Tally t = new Tally(f);
        try {
            first(f, r -> {
                t.add(r);
                return false;
            });
        } catch (UncheckedIOException e) {
            throw ArchiveFile.bad(f.path(), "cannot be read: " + e.getCause().getMessage());
        }
        if (t.count == 0) {
            throw ArchiveFile.bad(f.path(), "holds no record (a connector writes no empty file)");
        }
        return new Indexed(f, f.start(), t.last + 1, t.count, t.maxTimestamp, t.exact, t.timed);
    }

    /** What one file's records add up to as they are read, each checked against its name and the one before. */
    private static final class Tally {
        final ArchiveFile file;
        long count;
        long last;
        long maxTimestamp = dev.kbackfill.core.version.LogClock.NONE;
        boolean exact = true;
        boolean timed = true;

        Tally(ArchiveFile file) {
            this.file = file;
            this.last = file.start() - 1;
        }

        void add(ArchivedRecord r) {
            if (count == 0 && r.offset() != file.start()) {
                throw ArchiveFile.bad(file.path(), "is named for offset " + file.start() + " but its first record is "
                        + "at offset " + r.offset() + ": its name and content disagree");
            }
            if (r.offset() <= last) {
                throw ArchiveFile.bad(file.path(), "holds offset " + r.offset() + " after offset " + last
                        + ": its records are not in offset order");
            }
            last = r.offset();
            count++;
            exact &= r.exact();
            timed &= r.timestamp() >= 0;
            maxTimestamp = Math.max(maxTimestamp, r.timestamp());
        }
    }

    private static void checkFolder(String path, String[] parts, int partition) {
        if (parts.length >= 2) {
            Matcher dir = PARTITION_DIR.matcher(parts[parts.length - 2]);
            if (dir.matches() && Integer.parseInt(dir.group(1)) != partition) {
                throw ArchiveFile.bad(path, "is named for partition " + partition + " but lies in folder "
                        + parts[parts.length - 2] + ": its name and folder disagree");
            }
        }
    }

    private static ArchiveFile.Format confluentFormat(String path, String ext) {
        ArchiveFile.Encoding encoding = ArchiveFile.encodingOf(path);
        if (encoding == null) {
            throw ArchiveFile.bad(path, "is in format ." + ext + ", which kbackfill does not read: it reads Confluent's "
                    + "JSON (.json, .json.gz), Avro (.avro) and Parquet (.parquet, .snappy.parquet, ...) formats");
        }
        return switch (encoding) {
            case AVRO -> ArchiveFile.Format.CONFLUENT_AVRO;
            case PARQUET -> ArchiveFile.Format.CONFLUENT_PARQUET;
            default -> ArchiveFile.Format.CONFLUENT_JSON;
        };
    }

    /** The stream compressions Aiven's names carry ({@code file.compression.type}). */
    private static final Pattern AIVEN_EXTENSION = Pattern.compile("(\\.avro)?(\\.gz|\\.snappy|\\.zst)?");

    /** Aiven's files name their format only for Avro: their first bytes tell it (Parquet's before decompression). */
    private ArchiveFile.Format aivenFormat(String path, String ext) {
        if (ext != null && !AIVEN_EXTENSION.matcher(ext).matches()) {
            throw ArchiveFile.bad(path, "has extension " + ext + ": Aiven's files end in .avro or nothing, then .gz, "
                    + ".snappy or .zst where compressed");
        }
        byte[] head;
        // one open (a GET on object storage): the raw head, then the same bytes again through the decompression
        try (InputStream raw = new java.io.BufferedInputStream(store.open(path))) {
            raw.mark(4);
            head = raw.readNBytes(4);
            if (head.length == 4 && new String(head, java.nio.charset.StandardCharsets.US_ASCII).equals("PAR1")) {
                return ArchiveFile.Format.AIVEN_PARQUET;
            }
            raw.reset();
            head = ArchiveFile.decompressed(path, raw).readNBytes(SNIFFED_LINE);
        } catch (IOException e) {
            throw ArchiveFile.bad(path, "cannot be read: " + e.getMessage());
        }
        if (head.length >= 4 && head[0] == 'O' && head[1] == 'b' && head[2] == 'j' && head[3] == 1) {
            return ArchiveFile.Format.AIVEN_AVRO;
        }
        // the envelope is an object; without it a line is the bare value, any JSON. CSV lines are base64 cells and
        // numbers separated by commas, never an object: a first line that is JSON is taken for CSV only when the
        // archive's CSV fields are given
        if (head.length > 0 && head[0] == '{' || fields.isEmpty() && firstLineIsJson(head)) {
            return ArchiveFile.Format.AIVEN_JSONL;
        }
        if (fields.isEmpty()) {
            throw ArchiveFile.bad(path, "is in Aiven's CSV format, whose lines do not name their fields: give them as "
                    + "the connector's format.output.fields did, in order (" + dev.kbackfill.resolver.Wording.Term.ARCHIVE_FIELDS
                    + " key,value,offset,timestamp)");
        }
        return ArchiveFile.Format.AIVEN_CSV;
    }

    /** How much of an Aiven file is read to tell its format: its first line, where no longer. */
    private static final int SNIFFED_LINE = 1 << 16;

    private static boolean firstLineIsJson(byte[] head) {
        int end = 0;
        while (end < head.length && head[end] != '\n') {
            end++;
        }
        try (com.fasterxml.jackson.core.JsonParser parser = SNIFF.createParser(head, 0, end)) {
            if (parser.nextToken() == null) {
                return false;
            }
            parser.skipChildren();
            return parser.nextToken() == null; // one value, nothing after it
        } catch (IOException e) {
            return false;
        }
    }

    private static final com.fasterxml.jackson.core.JsonFactory SNIFF = new com.fasterxml.jackson.core.JsonFactory();

    private static String otherTopics(List<String> all) {
        Set<String> topics = new TreeSet<>();
        Pattern confluent = Pattern.compile("(.+)\\+\\d+\\+\\d+\\..+");
        Pattern aiven = Pattern.compile("(.+)-\\d+-\\d+(\\..+)?");
        for (String path : all) {
            String name = path.substring(path.lastIndexOf('/') + 1);
            Matcher m = confluent.matcher(name);
            Matcher a = aiven.matcher(name);
            if (m.matches()) {
                topics.add(m.group(1));
            } else if (a.matches()) {
                topics.add(a.group(1));
            }
        }
        return topics.isEmpty() ? "" : " (it holds topic(s) " + String.join(", ", topics) + ")";
    }

    private synchronized List<String> listing() {
        if (listing == null) {
            try {
                listing = store.list();
            } catch (IOException e) {
                throw new RequestException("cannot list archive " + location() + ": " + e.getMessage());
            }
        }
        return listing;
    }
}
