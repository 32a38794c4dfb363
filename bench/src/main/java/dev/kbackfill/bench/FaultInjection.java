package dev.kbackfill.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kbackfill.sink.delta.DeltaTableRows;
import dev.kbackfill.testservices.SharedS3;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Injects faults into real runs of {@code bin/kbackfill} and checks every outcome against a model of the topic:
 * one line per fault and sink, e.g. {@code postgres sigkill: 20 faults, lost 0, duplicated 0, wrong 0}.
 * A script, not a timed test: {@code bench/faults.sh [SIGKILLS] [all|sigkill|postgres|broker|retention|concurrent|registry]}.
 *
 * <ul>
 *   <li>lost: a key whose final record is a value, missing from the sink or holding an older value;</li>
 *   <li>wrong: a key the sink holds that the topic's range deleted or never had, or a value no record had;</li>
 *   <li>duplicated: a source record written twice (the Kafka sink, counted by its source coordinates; a database's
 *       primary key cannot hold a key twice, which is checked too).</li>
 * </ul>
 */
public final class FaultInjection {

    private static final String TOPIC = "faults-orders";
    /**
     * {@code -Dfaults.evolution=true}: the topic starts with deletes (batches of deletes only, from which a lake table
     * is created with its key columns) and records from the middle on carry a field the first half lacks (a column
     * added under --create-table, on every sink).
     */
    private final boolean evolution = Boolean.getBoolean("faults.evolution");
    private static final int PARTITIONS = 3;
    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path root;
    private final Path work;
    private final String classpath;
    private final Random random = new Random(Long.getLong("faults.seed", 42));
    private final int records;
    private final int keys;
    private Process broker;
    private String bootstrap;
    private Path brokerDir;
    /** The expected final state: key to status, from the model of the whole topic. */
    private Map<String, String> expected;
    private EmbeddedPostgres postgres;
    private Path postgresDir;
    private int postgresPort;

    private FaultInjection(Path root, int records) throws IOException {
        this.root = root;
        this.work = Files.createTempDirectory("kbackfill-faults-");
        this.classpath = Files.readString(root.resolve("bench/target/classpath.txt")).strip() + ":"
                + root.resolve("bench/target/classes");
        this.records = records;
        this.keys = Math.max(1, records / 4);
    }

    public static void main(String[] args) throws Exception {
        int kills = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        String only = args.length > 1 ? args[1] : "all";
        int records = Integer.getInteger("faults.records", 200_000);
        FaultInjection f = new FaultInjection(Path.of("").toAbsolutePath(), records);
        try {
            f.run(kills, only);
        } finally {
            f.stop();
        }
    }

    private void run(int kills, String only) throws Exception {
        System.out.printf(Locale.ROOT, "# %d records over %d keys in %d partitions, a tenth of keys ending in a "
                + "tombstone%s; runs of bin/kbackfill with --batch-size 2000; seed %d%n", records, keys, PARTITIONS,
                evolution ? ", after leading deletes, a field added halfway" : "", Long.getLong("faults.seed", 42));
        startBroker();
        load();
        startPostgres();
        if (only.equals("all") || only.equals("sigkill")) {
            for (String sink : List.of("sqlite", "postgres", "delta", "s3", "iceberg", "iceberg-s3", "kafka")) {
                sigkills(sink, kills);
            }
        }
        if (only.equals("all") || only.equals("postgres")) {
            postgresRestart();
            postgresRestartBetweenBatches();
        }
        if (only.equals("all") || only.equals("broker")) {
            brokerPause();
            brokerRestart();
        }
        if (only.equals("all") || only.equals("concurrent")) {
            twoRunsAtOnce(List.of("sqlite", "s3", "iceberg", "iceberg-s3", "kafka"));
            compactDuringARun();
        }
        if (only.equals("s3")) { // the Delta table in S3 alone: kills, two runs of one job, compact during a run
            sigkills("s3", kills);
            twoRunsAtOnce(List.of("s3"));
            compactDuringARun();
        }
        if (only.equals("iceberg")) { // Iceberg alone, a path table and a catalog table in S3: kills, two runs, reset
            sigkills("iceberg", kills);
            sigkills("iceberg-s3", kills);
            twoRunsAtOnce(List.of("iceberg", "iceberg-s3"));
            resetThenRerun("iceberg");
        }
        if (only.equals("all") || only.equals("retention")) {
            retention();
        }
        if (only.equals("all") || only.equals("registry")) {
            registryDown();
        }
        if (only.equals("all") || only.equals("reset")) {
            for (String sink : List.of("sqlite", "postgres", "delta", "iceberg", "kafka")) {
                resetThenRerun(sink);
            }
        }
    }

    // ---------------------------------------------------------------- the topic and its model

    private void load() throws Exception {
        Map<String, Object> config = createTopic(TOPIC, PARTITIONS);
        config.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        List<String[]> produced = new ArrayList<>(); // key, status or null
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            int leading = evolution ? Math.min(2000, records / 5) : 0;
            for (int j = 0; j < leading; j++) {
                String key = String.format(Locale.ROOT, "k%06d", j % keys);
                sent.add(p.send(new ProducerRecord<>(TOPIC, (Integer) null, (Long) T0.minusSeconds(leading - j).toEpochMilli(),
                        key, (String) null)));
                produced.add(new String[] {key, null});
            }
            for (int i = 0; i < records; i++) {
                int k = i % keys;
                int update = i / keys;
                String key = String.format(Locale.ROOT, "k%06d", k);
                boolean last = i + keys >= records;
                String value = last && k % 10 == 0 ? null : String.format(Locale.ROOT,
                        "{\"order_id\":\"%s\",\"status\":\"s%d\",\"n\":%d%s}", key, update, i,
                        evolution && i >= records / 2 ? ",\"coupon\":\"c" + i + "\"" : "");
                sent.add(p.send(new ProducerRecord<>(TOPIC, null, T0.plusSeconds(i).toEpochMilli(), key, value)));
                produced.add(new String[] {key, value == null ? null : "s" + update});
            }
        }
        // per key, the record with the highest offset in its partition (one key, one partition)
        Map<String, long[]> at = new HashMap<>();
        Map<String, String> last = new TreeMap<>();
        for (int i = 0; i < produced.size(); i++) {
            RecordMetadata m = sent.get(i).get();
            String key = produced.get(i)[0];
            long[] before = at.get(key);
            if (before == null || before[1] < m.offset()) {
                at.put(key, new long[] {m.partition(), m.offset()});
                last.put(key, produced.get(i)[1]);
            }
        }
        expected = new TreeMap<>();
        last.forEach((k, v) -> {
            if (v != null) {
                expected.put(k, v);
            }
        });
        System.out.printf("# loaded %d records; the final state holds %d keys%n", records, expected.size());
    }

    /**
     * Creates a topic that keeps old event times ({@code retention.ms=-1}) and returns producer settings for it
     * (acks=all), once the broker had a moment to settle its partitions.
     */
    private Map<String, Object> createTopic(String topic, int partitions) throws Exception {
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(config)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)
                    .configs(Map.of("retention.ms", "-1")))).all().get(60, TimeUnit.SECONDS);
        }
        Thread.sleep(1000);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        return config;
    }

    // ---------------------------------------------------------------- faults

    /**
     * SIGKILLs at random moments (JVM start, planning, reading, a commit in flight) until {@code kills} faults were
     * injected: a job is killed again and again until a run of it completes by itself, then checked, and a new job
     * starts, so every fault lands on a job that still has work.
     */
    private void sigkills(String sink, int kills) throws Exception {
        int faults = 0;
        int jobs = 0;
        long[] totals = new long[3];
        int worstExit = 0;
        long started = System.nanoTime();
        while (faults < kills) {
            Target t = target(sink, "sigkill-" + (++jobs));
            while (faults < kills) {
                Process p = kbackfill(t, "--retry-for", "0", "--batch-size", "500");
                long delay = 300 + random.nextInt(2700);
                if (p.waitFor(delay, TimeUnit.MILLISECONDS)) {
                    drain(p);
                    break; // this job completed: check it, then the next job
                }
                p.destroyForcibly().waitFor();
                faults++;
            }
            int exit = complete(t, "--retry-for", "0", "--batch-size", "500");
            worstExit = Math.max(worstExit, exit);
            long[] r = check(t);
            for (int i = 0; i < 3; i++) {
                totals[i] += r[i];
            }
        }
        System.out.printf(Locale.ROOT, "%s sigkill: %d faults, lost %d, duplicated %d, wrong %d (over %d jobs, each "
                + "then run to completion, last exits %s; %.0f s)%n", sink, faults, totals[0], totals[1], totals[2],
                jobs, worstExit == 0 ? "0" : "up to " + worstExit, (System.nanoTime() - started) / 1e9);
        System.out.flush();
    }

    private void postgresRestart() throws Exception {
        Target t = target("postgres", "restart");
        Process p = kbackfill(t, "--retry-for", "2m");
        Thread.sleep(2500);
        boolean finished = !p.isAlive();
        postgres.close();
        Thread.sleep(5000);
        startPostgres();
        int exit = p.waitFor(5, TimeUnit.MINUTES) ? p.exitValue() : -1;
        String retries = drain(p).lines().filter(l -> l.startsWith("retrying")).count() + " retries said";
        report("postgres restart mid-run", finished ? 0 : 1, t, exit, retries + (exit == 0
                ? "; the same process completed" : "; the process failed"));
    }

    /**
     * PostgreSQL restarted while a throttled {@code --max-records} run waits between batches: the connection dies
     * idle, and the next batch's first statement (the tombstones' version lookup, before any COPY) meets it. The
     * retry must open a new session and make its staging table again; the run then ends at its limit, and a second
     * run finishes the range.
     */
    private void postgresRestartBetweenBatches() throws Exception {
        Target t = target("postgres", "restart-idle");
        Process p = kbackfill(t, "--retry-for", "2m", "--max-records", Long.toString(records / 2),
                "--max-records-per-second", "20000");
        Thread.sleep(2500);
        boolean finished = !p.isAlive();
        postgres.close();
        Thread.sleep(5000);
        startPostgres();
        int limited = p.waitFor(5, TimeUnit.MINUTES) ? p.exitValue() : -1;
        String out = drain(p);
        String last = out.lines().filter(l -> !l.isBlank()).reduce((a, b) -> b).orElse("");
        int exit = complete(t);
        report("postgres restart between batches of a --max-records run", finished ? 0 : 1, t, exit, "the "
                + "restarted run exits " + limited + (limited == 0 ? "" : " (" + last + ")") + " after "
                + out.lines().filter(l -> l.startsWith("retrying")).count() + " retries said; a second run completed");
    }

    private void brokerPause() throws Exception {
        Target t = target("sqlite", "pause");
        Process p = kbackfill(t, "--retry-for", "2m");
        Thread.sleep(2000);
        boolean finished = !p.isAlive();
        signal("STOP");
        Thread.sleep(60_000);
        signal("CONT");
        int exit = p.waitFor(5, TimeUnit.MINUTES) ? p.exitValue() : -1;
        String out = drain(p);
        report("broker paused 60 s mid-run (sqlite)", finished ? 0 : 1, t, exit,
                out.lines().filter(l -> l.startsWith("retrying")).count() + " retries said");
    }

    private void brokerRestart() throws Exception {
        Target t = target("sqlite", "restart");
        Process p = kbackfill(t, "--retry-for", "2m");
        Thread.sleep(2000);
        boolean finished = !p.isAlive();
        broker.destroyForcibly().waitFor();
        Thread.sleep(3000);
        startBroker();
        int exit = p.waitFor(5, TimeUnit.MINUTES) ? p.exitValue() : -1;
        String out = drain(p);
        report("broker killed and restarted on its data mid-run (sqlite)", finished ? 0 : 1, t, exit,
                out.lines().filter(l -> l.startsWith("retrying")).count() + " retries said");
    }

    private void twoRunsAtOnce(List<String> sinks) throws Exception {
        for (String sink : sinks) {
            Target t = target(sink, "concurrent");
            Process a = kbackfill(t, "--retry-for", "0");
            Thread.sleep(300);
            Process b = kbackfill(t, "--retry-for", "0");
            int ea = a.waitFor(5, TimeUnit.MINUTES) ? a.exitValue() : -1;
            int eb = b.waitFor(5, TimeUnit.MINUTES) ? b.exitValue() : -1;
            int exit = complete(t, "--retry-for", "0");
            report(sink + " two runs of one job at once", 1, t, exit, "exits " + ea + " and " + eb
                    + (sink.equals("kafka") ? " (the second fences the first)" : " (the second is refused, exit 3)"));
        }
    }

    /**
     * {@code kbackfill compact} on a Delta table, local and in S3, again and again while a run writes it in small
     * batches: neither may lose the other's commits (a compaction that lost the race fails, "compact again").
     */
    private void compactDuringARun() throws Exception {
        for (String sink : List.of("delta", "s3")) {
            Target t = target(sink, "compact");
            Process run = kbackfill(t, "--retry-for", "0", "--batch-size", "500");
            int compactions = 0;
            int refused = 0;
            while (run.isAlive()) {
                Process c = start(compactArgs(t));
                int exit = c.waitFor(5, TimeUnit.MINUTES) ? c.exitValue() : -1;
                String out = drain(c);
                if (exit == 0) {
                    compactions++;
                } else if (out.contains("compact again")) {
                    refused++;
                } else if (out.contains("no Delta table")) {
                    Thread.sleep(200); // the run has not created it yet
                } else {
                    System.out.println("#   compact exit " + exit + ": " + out.lines().reduce((a, b) -> b).orElse(""));
                }
            }
            int exit = run.waitFor(1, TimeUnit.MINUTES) ? run.exitValue() : -1;
            drain(run);
            if (exit != 0) {
                exit = complete(t, "--retry-for", "0");
            }
            report(sink + " compact again and again during a run", compactions + refused, t, exit, compactions
                    + " compactions committed, " + refused + " refused (another writer committed first)");
        }
    }

    /** {@code compact} with the target's filesystem options (not the run's lease setting, which it does not take). */
    private static List<String> compactArgs(Target t) {
        List<String> args = new ArrayList<>(List.of("compact", "--sink", t.url()));
        List<String> o = t.options();
        for (int i = 0; i + 1 < o.size(); i += 2) {
            if (!o.get(i + 1).startsWith("kbackfill.")) {
                args.addAll(List.of(o.get(i), o.get(i + 1)));
            }
        }
        return args;
    }

    /**
     * A job run to its end, reset, and the same command run again (killed once mid-way, then to its end): the target
     * must hold the final state exactly once (a topic sink must not send again what it holds), and the second
     * incarnation's summary must count what the target already held as kept out.
     */
    private void resetThenRerun(String sink) throws Exception {
        Target t = target(sink, "reset");
        int first = complete(t, "--retry-for", "0");
        List<String> resetArgs = new ArrayList<>(List.of("reset", "--bootstrap-server", bootstrap, "--job", t.job(),
                "--sink", t.url(), "--yes"));
        if (!sink.equals("kafka")) {
            resetArgs.addAll(List.of("--table", "orders"));
        }
        Process reset = start(resetArgs);
        int resetExit = reset.waitFor(2, TimeUnit.MINUTES) ? reset.exitValue() : -1;
        drain(reset);
        Process killed = kbackfill(t, "--retry-for", "0");
        boolean finished = killed.waitFor(1500, TimeUnit.MILLISECONDS);
        if (!finished) {
            killed.destroyForcibly().waitFor();
        } else {
            drain(killed);
        }
        Process again = kbackfill(t, "--retry-for", "0");
        int exit = again.waitFor(10, TimeUnit.MINUTES) ? again.exitValue() : -1;
        String summary = drain(again).lines().filter(l -> l.startsWith("job ") || l.contains("kept out"))
                .reduce((a, b) -> a + "; " + b).orElse("");
        report(sink + " reset, then the same command again (killed once)", finished ? 0 : 1, t, exit,
                "first run exit " + first + ", reset exit " + resetExit + "; " + summary);
    }

    /**
     * Retention passes the reader mid-run (deleteRecords on a partition ahead of it): the run must stop naming the
     * loss, and a rerun with --allow-data-loss must count what was deleted as lost, writing the rest.
     */
    private void retention() throws Exception {
        String topic = "faults-retention";
        Map<String, Object> config = createTopic(topic, 1);
        int n = 400_000;
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < n; i++) {
                p.send(new ProducerRecord<>(topic, 0, T0.plusSeconds(i).toEpochMilli(), "r" + i, "{\"status\":\"x\"}"));
            }
        }
        String url = "jdbc:sqlite:" + work.resolve("retention.db");
        List<String> args = List.of("run", "--bootstrap-server", bootstrap, "--progress", "none", "--topic", topic,
                "--from", "earliest", "--to", "latest", "--sink", url, "--table", "orders", "--create-table", "--job",
                "retention", "--batch-size", "500", "--retry-for", "0");
        Process p = start(args);
        long cut = n - 100_000;
        awaitFirstCommit(p, url); // then cut, well ahead of where it reads
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(cut))).all()
                    .get(60, TimeUnit.SECONDS);
        }
        int first = p.waitFor(5, TimeUnit.MINUTES) ? p.exitValue() : -1;
        String firstOut = drain(p);
        long written = count(url, "SELECT count(*) FROM orders");
        List<String> again = new ArrayList<>(args);
        again.add("--allow-data-loss");
        Process q = start(again);
        int second = q.waitFor(5, TimeUnit.MINUTES) ? q.exitValue() : -1;
        String out = drain(q);
        long lost = out.lines().filter(l -> l.startsWith("total")).mapToLong(l -> Long.parseLong(l.trim().split(" +")[7]))
                .sum();
        long rows = count(url, "SELECT count(*) FROM orders");
        boolean named = firstOut.contains("were deleted") || firstOut.contains("deleteRecords");
        // every record is written or counted lost: rows + lost = n
        System.out.printf(Locale.ROOT, "retention past the reader (deleteRecords to offset %d): first run exit %d%s, "
                + "%d rows then; rerun with --allow-data-loss exit %d: %d rows + %d counted lost = %d of %d records, "
                + "unaccounted %d%n", cut, first, named ? " naming the loss" : " WITHOUT naming the loss", written,
                second, rows, lost, rows + lost, n, n - rows - lost);
    }

    /**
     * The schema registry stops answering mid-run (SIGSTOP for 45 s, longer than the client's 30 s timeout) just
     * as the run needs a schema it has not fetched yet: the second half of the topic is written with a second
     * version of the schema. The run must retry and complete with every record.
     */
    private void registryDown() throws Exception {
        String registry = dev.kbackfill.testservices.SharedRegistry.url();
        String v1 = "{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"n\",\"type\":\"long\"}]}";
        String v2 = "{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"n\",\"type\":\"long\"},"
                + "{\"name\":\"note\",\"type\":\"string\",\"default\":\"\"}]}";
        String topic = "faults-avro";
        int id1 = dev.kbackfill.testservices.SharedRegistry.register(topic + "-value", v1, null);
        int id2 = dev.kbackfill.testservices.SharedRegistry.register(topic + "-value", v2, null);
        org.apache.avro.Schema s1 = new org.apache.avro.Schema.Parser().parse(v1);
        org.apache.avro.Schema s2 = new org.apache.avro.Schema.Parser().parse(v2);
        Map<String, Object> config = createTopic(topic, 1);
        int n = 300_000;
        int second = 200_000; // where the second schema starts
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(config, new StringSerializer(),
                new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            for (int i = 0; i < n; i++) {
                org.apache.avro.generic.GenericRecord r = new org.apache.avro.generic.GenericData.Record(i < second ? s1 : s2);
                r.put("n", (long) i);
                if (i >= second) {
                    r.put("note", "v2");
                }
                p.send(new ProducerRecord<>(topic, 0, T0.plusSeconds(i).toEpochMilli(), "a" + i,
                        dev.kbackfill.testservices.ConfluentFraming.frame(i < second ? id1 : id2, i < second ? s1 : s2, r)));
            }
        }
        String url = "jdbc:sqlite:" + work.resolve("registry.db");
        Process p = start(List.of("run", "--bootstrap-server", bootstrap, "--progress", "none", "--topic", topic,
                "--from", "earliest", "--to", "latest", "--sink", url, "--table", "orders", "--create-table", "--job",
                "registry", "--batch-size", "2000", "--value-format", "avro", "--schema-registry-url", registry,
                "--retry-for", "3m"));
        awaitFirstCommit(p, url);
        long pausedAt = count(url, "SELECT max(next_offset) FROM kbackfill_progress");
        ProcessHandle apicurio = ProcessHandle.current().children()
                .filter(h -> h.info().commandLine().orElse("").contains("runner.jar")).findFirst().orElseThrow();
        new ProcessBuilder("kill", "-STOP", Long.toString(apicurio.pid())).start().waitFor();
        Thread.sleep(45_000);
        new ProcessBuilder("kill", "-CONT", Long.toString(apicurio.pid())).start().waitFor();
        int exit = p.waitFor(5, TimeUnit.MINUTES) ? p.exitValue() : -1;
        String out = drain(p);
        long rows = count(url, "SELECT count(*) FROM orders");
        long wrong = count(url, "SELECT count(*) FROM orders WHERE n <> CAST(substr(kafka_key, 2) AS INTEGER) "
                + "OR (n >= " + second + " AND note <> 'v2')");
        System.out.printf(Locale.ROOT, "schema registry stopped 45 s mid-run (paused at offset %d, before the second "
                + "schema was fetched): 1 fault, lost %d, duplicated 0, wrong %d (final run exit %d; %d retries said)%n",
                pausedAt, n - rows, wrong, exit, out.lines().filter(l -> l.startsWith("retrying")).count());
    }

    /** Waits until the run {@code p} has committed progress into the SQLite file {@code url} (or ended). */
    private static void awaitFirstCommit(Process p, String url) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (p.isAlive() && System.nanoTime() < deadline) {
            long next = 0;
            try {
                next = count(url, "SELECT max(next_offset) FROM kbackfill_progress");
            } catch (Exception notYet) {
                // no database or job tables yet
            }
            if (next > 0) {
                return;
            }
            Thread.sleep(50);
        }
    }

    // ---------------------------------------------------------------- sinks and checks

    /** @param options the sink's own options (a Delta table in S3: its endpoint and credentials file) */
    private record Target(String sink, String url, String job, String reference, List<String> options) {
        Target(String sink, String url, String job, String reference) {
            this(sink, url, job, reference, List.of());
        }
    }

    /**
     * A Delta table in S3 (S3Proxy): the endpoint through --sink-property, the credentials through a
     * --sink-command-config file, and a 3 s lease, so that the run after a SIGKILL finds the killed run's lease
     * expired instead of waiting out the default minute.
     */
    private Target s3(String job) throws IOException {
        Path credentials = work.resolve("s3.properties");
        Files.writeString(credentials, "fs.s3a.access.key=" + SharedS3.ACCESS_KEY + "\nfs.s3a.secret.key="
                + SharedS3.SECRET_KEY + "\n");
        List<String> options = new ArrayList<>(List.of("--sink-command-config", credentials.toString(),
                "--sink-property", "kbackfill.lock.lease.ms=3000"));
        SharedS3.standard().s3aEndpointSettings().forEach((k, v) -> options.addAll(List.of("--sink-property", k + "=" + v)));
        return new Target("s3", "delta:s3a://" + SharedS3.standard().newBucket() + "/" + job, job, null,
                List.copyOf(options));
    }

    /**
     * An Iceberg table in S3 (S3Proxy): a JDBC catalog in a SQLite file whose warehouse is a bucket, the endpoint
     * through --sink-property, the credentials through a --sink-command-config file, a 3 s lease.
     */
    private Target icebergS3(String job) throws IOException {
        Target s3 = s3(job);
        List<String> options = new ArrayList<>(s3.options());
        options.addAll(List.of("--sink-property", "warehouse=s3a://" + SharedS3.standard().newBucket() + "/warehouse"));
        return new Target("iceberg-s3", "iceberg:jdbc:sqlite:" + work.resolve(job + "-catalog.db") + "#lake.orders",
                job, null, List.copyOf(options));
    }

    private Target target(String sink, String fault) throws Exception {
        String job = "faults-" + sink + "-" + fault;
        return switch (sink) {
            case "sqlite" -> new Target(sink, "jdbc:sqlite:" + work.resolve(job + ".db"), job, null);
            case "postgres" -> {
                String db = job.replace('-', '_');
                try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
                    s.execute("DROP DATABASE IF EXISTS " + db);
                    s.execute("CREATE DATABASE " + db);
                }
                yield new Target(sink, "jdbc:postgresql://127.0.0.1:" + postgresPort + "/" + db + "?user=postgres", job,
                        null);
            }
            case "delta" -> new Target(sink, "delta:" + work.resolve(job), job, null);
            case "s3" -> s3(job);
            case "iceberg" -> new Target(sink, "iceberg:" + work.resolve(job), job, null);
            case "iceberg-s3" -> icebergS3(job);
            case "kafka" -> new Target(sink, "kafka:" + job, job, null);
            default -> throw new IllegalArgumentException(sink);
        };
    }

    private Process kbackfill(Target t, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("run", "--bootstrap-server", bootstrap, "--progress", "none",
                "--topic", TOPIC, "--from", "earliest", "--to", "offset:" + (records / PARTITIONS + records), "--sink",
                t.url(), "--table", "orders", "--job", t.job()));
        if (!List.of(extra).contains("--batch-size")) {
            args.addAll(List.of("--batch-size", "2000"));
        }
        args.add(t.sink().equals("kafka") ? "--create-topic" : "--create-table");
        args.addAll(t.options());
        args.addAll(List.of(extra));
        return start(args);
    }

    private Process start(List<String> args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(root.resolve("bin/kbackfill").toString());
        command.addAll(args);
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    /** Runs the job to its end (a few attempts: a run may find the previous one's lock still held for a moment). */
    private int complete(Target t, String... extra) throws Exception {
        int exit = -1;
        for (int attempt = 0; attempt < 3 && exit != 0; attempt++) {
            Process p = kbackfill(t, extra);
            exit = p.waitFor(10, TimeUnit.MINUTES) ? p.exitValue() : -1;
            String out = drain(p);
            if (exit != 0) {
                System.out.println("#   " + t.sink() + " completion attempt exit " + exit + ": "
                        + out.lines().reduce((a, b) -> b).orElse(""));
            }
        }
        return exit;
    }

    private void report(String what, int faults, Target t, int exit, String note) throws Exception {
        long[] r = check(t);
        System.out.printf(Locale.ROOT, "%s: %d fault%s, lost %d, duplicated %d, wrong %d (final run exit %d; %s)%n",
                what, faults, faults == 1 ? "" : "s", r[0], r[1], r[2], exit, note);
        System.out.flush();
    }

    /** Compares the sink's final state with the model: {lost, duplicated, wrong}. */
    private long[] check(Target t) throws Exception {
        Map<String, String> actual = new TreeMap<>();
        long duplicated = read(t, actual);
        long lost = 0;
        long wrong = 0;
        for (Map.Entry<String, String> e : expected.entrySet()) {
            String got = actual.get(e.getKey());
            if (got == null) {
                lost++;
            } else if (!got.equals(e.getValue())) {
                wrong++;
            }
        }
        for (String k : actual.keySet()) {
            if (!expected.containsKey(k)) {
                wrong++; // deleted by the range, or never written: resurrected or invented
            }
        }
        return new long[] {lost, duplicated, wrong};
    }

    /** Reads the sink's final state into {@code rows}; returns how many source records it holds twice. */
    private long read(Target t, Map<String, String> rows) throws Exception {
        switch (t.sink()) {
            case "sqlite", "postgres" -> {
                long dup = 0;
                try (Connection c = DriverManager.getConnection(t.url()); Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery("SELECT kafka_key, status FROM orders")) {
                    while (rs.next()) {
                        if (rows.put(rs.getString(1), rs.getString(2)) != null) {
                            dup++;
                        }
                    }
                }
                return dup;
            }
            case "delta", "s3" -> {
                long dup = 0;
                for (Map<String, Object> r : DeltaTableRows.rows(t.url().substring("delta:".length()),
                        t.sink().equals("s3") ? SharedS3.standard().s3aSettings() : Map.of())) {
                    if (rows.put((String) r.get("kafka_key"), (String) r.get("status")) != null) {
                        dup++;
                    }
                }
                return dup;
            }
            case "iceberg", "iceberg-s3" -> {
                long dup = 0;
                for (Map<String, Object> r : icebergRows(t)) {
                    if (rows.put((String) r.get("kafka_key"), (String) r.get("status")) != null) {
                        dup++;
                    }
                }
                return dup;
            }
            default -> {
                return readTopic(t.url().substring("kafka:".length()), rows);
            }
        }
    }

    /** An Iceberg table's live rows, read with Iceberg's generic reader (every delete applied). */
    private List<Map<String, Object>> icebergRows(Target t) throws Exception {
        org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
        org.apache.iceberg.Table table;
        org.apache.iceberg.jdbc.JdbcCatalog catalog = null;
        if (t.sink().equals("iceberg")) {
            org.apache.iceberg.hadoop.HadoopTables tables = new org.apache.iceberg.hadoop.HadoopTables(conf);
            String path = t.url().substring("iceberg:".length());
            if (!tables.exists(path)) {
                return List.of();
            }
            table = tables.load(path);
        } else {
            SharedS3.standard().s3aSettings().forEach(conf::set);
            String url = t.url().substring("iceberg:".length());
            String warehouse = t.options().stream().filter(o -> o.startsWith("warehouse=")).findFirst().orElseThrow()
                    .substring("warehouse=".length());
            catalog = new org.apache.iceberg.jdbc.JdbcCatalog();
            catalog.setConf(conf);
            catalog.initialize("kbackfill", Map.of("uri", url.substring(0, url.indexOf('#')), "warehouse", warehouse));
            org.apache.iceberg.catalog.TableIdentifier id = org.apache.iceberg.catalog.TableIdentifier.of("lake", "orders");
            if (!catalog.tableExists(id)) {
                catalog.close();
                return List.of();
            }
            table = catalog.loadTable(id);
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> records =
                     org.apache.iceberg.data.IcebergGenerics.read(table).select("kafka_key", "status").build()) {
            for (org.apache.iceberg.data.Record r : records) {
                Map<String, Object> row = new HashMap<>();
                row.put("kafka_key", r.getField("kafka_key"));
                row.put("status", r.getField("status"));
                rows.add(row);
            }
        } finally {
            if (catalog != null) {
                catalog.close();
            }
        }
        return rows;
    }

    private long readTopic(String topic, Map<String, String> rows) throws Exception {
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", bootstrap);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, Integer> copies = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> parts = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> ends = consumer.endOffsets(parts);
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (parts.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    String key = new String(r.key(), StandardCharsets.UTF_8);
                    copies.merge(header(r, "kbackfill.source.partition") + "@" + header(r, "kbackfill.source.offset"),
                            1, Integer::sum);
                    if (r.value() == null) {
                        rows.remove(key);
                    } else {
                        rows.put(key, JSON.readTree(r.value()).path("status").asText());
                    }
                }
            }
        }
        return copies.values().stream().filter(n -> n > 1).mapToLong(n -> n - 1).sum();
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? "?" : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static long count(String url, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getLong(1) : 0;
        }
    }

    private static String drain(Process p) throws IOException {
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- services

    private void startBroker() throws Exception {
        if (brokerDir == null) {
            brokerDir = work.resolve("broker");
        }
        broker = new ProcessBuilder("java", "-Xmx1g", "-cp", classpath,
                dev.kbackfill.embedded.EmbeddedKafkaProcess.class.getName(), brokerDir.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(broker.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = r.readLine()) != null && !line.startsWith("READY ")) {
            // broker output before it is ready
        }
        if (line == null) {
            throw new IllegalStateException("the broker process ended before it was ready");
        }
        bootstrap = line.substring(6);
    }

    private void signal(String name) throws Exception {
        new ProcessBuilder("kill", "-" + name, Long.toString(broker.pid())).inheritIO().start().waitFor();
    }

    private void startPostgres() throws IOException {
        if (postgresDir == null) {
            postgresDir = work.resolve("postgres");
            postgresPort = freePort();
        }
        postgres = EmbeddedPostgres.builder().setDataDirectory(postgresDir).setCleanDataDirectory(false)
                .setPort(postgresPort).start();
    }

    private static int freePort() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private void stop() {
        try {
            if (postgres != null) {
                postgres.close();
            }
        } catch (IOException e) {
            // exiting
        }
        if (broker != null) {
            try (OutputStream in = broker.getOutputStream()) {
                in.close();
            } catch (IOException e) {
                // gone already
            }
            broker.destroy();
        }
    }
}
