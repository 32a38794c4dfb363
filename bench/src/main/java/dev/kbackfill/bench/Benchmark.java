package dev.kbackfill.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.testservices.SharedPostgres;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

/**
 * Runs every benchmark of docs/benchmarks.md side by side in one go and prints a report. Peers run alternately,
 * round after round, so a noisy neighbour hurts both. Usage: {@code bench/run.sh [RECORDS] [ROUNDS] [all|read|postgres|delta|scale|plan|index|growth|serve]}
 * ({@code serve} loads the topic and keeps the broker up until end of input, for experiments by hand).
 */
public final class Benchmark {

    private static final String TOPIC = "bench-orders";
    private static final int PARTITIONS = 6;
    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    private final Path root;
    private final String classpath;
    private final int records;
    private final int keys;
    private final int rounds;
    private String bootstrap;
    private int[] partitionOf;
    private long[] offsetOf;

    private final String only;

    private Benchmark(Path root, int records, int rounds, String only) throws IOException {
        this.only = only;
        this.root = root;
        this.classpath = Files.readString(root.resolve("bench/target/classpath.txt")).strip() + ":"
                + root.resolve("bench/target/classes");
        this.records = records;
        // five updates per key by default; -Dbench.keys=N for another shape (N = RECORDS: every key once)
        this.keys = Integer.getInteger("bench.keys", Math.max(1, records / 5));
        this.rounds = rounds;
    }

    public static void main(String[] args) throws Exception {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        String only = args.length > 2 ? args[2] : "all";
        new Benchmark(Path.of("").toAbsolutePath(), records, rounds, only).run();
    }

    public static String json(int i, int keys) {
        int key = i % keys;
        int update = i / keys;
        return String.format(Locale.ROOT, "{\"order_id\":\"order-%07d\",\"customer\":\"customer-%05d\",\"status\":"
                + "\"status-%d\",\"amount\":%d.%02d,\"currency\":\"EUR\",\"items\":%d,\"channel\":\"web\","
                + "\"updated_at\":\"%s\",\"note\":\"benchmark record padding to about two hundred bytes\"}",
                key, key % 20000, update, 10 + key % 900, key % 100, 1 + key % 9, T0.plusSeconds(i));
    }

    /** The orders of {@link #json} as Avro: the same fields, the amount a decimal, the time a timestamp. */
    static final String AVRO_SCHEMA = """
            {"type":"record","name":"Order","fields":[
              {"name":"order_id","type":"string"},{"name":"customer","type":"string"},{"name":"status","type":"string"},
              {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
              {"name":"currency","type":"string"},{"name":"items","type":"int"},{"name":"channel","type":"string"},
              {"name":"updated_at","type":{"type":"long","logicalType":"timestamp-millis"}},
              {"name":"note","type":"string"}]}""";

    /** Order {@code i} of {@link #json} in Confluent's Avro framing, schema id 1. */
    static byte[] avro(org.apache.avro.Schema schema, int i, int keys) {
        int key = i % keys;
        org.apache.avro.generic.GenericRecord r = new org.apache.avro.generic.GenericData.Record(schema);
        r.put("order_id", String.format(Locale.ROOT, "order-%07d", key));
        r.put("customer", String.format(Locale.ROOT, "customer-%05d", key % 20000));
        r.put("status", "status-" + i / keys);
        r.put("amount", new java.math.BigDecimal(String.format(Locale.ROOT, "%d.%02d", 10 + key % 900, key % 100)));
        r.put("currency", "EUR");
        r.put("items", 1 + key % 9);
        r.put("channel", "web");
        r.put("updated_at", T0.plusSeconds(i));
        r.put("note", "benchmark record padding to about two hundred bytes");
        return dev.kbackfill.testservices.ConfluentFraming.frame(1, schema, r);
    }

    public static String key(int i, int keys) {
        return String.format(Locale.ROOT, "order-%07d", i % keys);
    }

    private void run() throws Exception {
        if (only.equals("decode")) {
            decoding(); // one JVM, no broker: decoders on records in memory
            return;
        }
        if (only.equals("all")) {
            decoding();
        }
        System.out.printf("kbackfill benchmark: %d records (%d keys), %d partitions, %d rounds, %s, %d cores%n",
                records, keys, PARTITIONS, rounds, Instant.now(), Runtime.getRuntime().availableProcessors());
        Process broker = new ProcessBuilder("java", "-Xmx1g", "-cp", classpath, dev.kbackfill.embedded.EmbeddedKafkaProcess.class.getName())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(broker.getInputStream(), StandardCharsets.UTF_8));
            String line = out.readLine();
            if (line == null || !line.startsWith("READY ")) {
                throw new IllegalStateException("the broker process did not start: " + line);
            }
            bootstrap = line.substring(6);
            System.out.println("broker process at " + bootstrap);
            // serve: -Dbench.serve=wide,avro,narrow (default), growth (the Iceberg bench's every-key-once topic at
            // -Dbench.icebergSizes) and partitioned (the partitioned bench's topics at RECORDS/10 and RECORDS)
            List<String> served = List.of(System.getProperty("bench.serve", "wide,avro,narrow").split(","));
            if (!only.equals("growth") && !only.equals("cron") && (!only.equals("serve") || served.contains("wide"))) {
                load();
            }
            if (only.equals("all") || only.equals("read")) {
                reading();
            }
            if (only.equals("all") || only.equals("postgres")) {
                postgres();
            }
            if (only.equals("narrow")) {
                narrowPostgres(SharedPostgres.newDatabase("bench_narrow"));
            }
            if (only.equals("all") || only.equals("delta")) {
                delta();
            }
            if (only.equals("all") || only.equals("iceberg")) {
                iceberg();
            }
            if (only.equals("all") || only.equals("scale")) {
                scale();
            }
            if (only.equals("all") || only.equals("plan")) {
                planning();
            }
            if (only.equals("all") || only.equals("index")) {
                targetIndex();
            }
            if (only.equals("all") || only.equals("growth")) {
                growth();
            }
            if (only.equals("all") || only.equals("verify")) {
                verification();
            }
            if (only.equals("partitioned")) { // not in all: it loads 1.1x RECORDS records of its own
                partitioned();
            }
            if (only.equals("all") || only.equals("cron")) {
                cron();
            }
            if (only.equals("all") || only.equals("live")) {
                live();
            }
            if (only.equals("serve")) {
                serve(served);
            }
        } finally {
            broker.getOutputStream().close();
            broker.waitFor(30, TimeUnit.SECONDS);
            broker.destroyForcibly();
        }
    }

    private void load() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
            Thread.sleep(2000); // KAFKA-15591: let the leaders settle before the idempotent producer starts
        }
        partitionOf = new int[records];
        offsetOf = new long[records];
        long started = System.nanoTime();
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> window = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                final int index = i;
                p.send(new ProducerRecord<>(TOPIC, null, T0.plusSeconds(i).toEpochMilli(), key(i, keys), json(i, keys)),
                        (m, e) -> {
                            if (e == null) {
                                partitionOf[index] = m.partition();
                                offsetOf[index] = m.offset();
                            }
                        });
            }
            p.flush();
        }
        double s = (System.nanoTime() - started) / 1e9;
        System.out.printf(Locale.ROOT, "loaded %d records in %.1f s (%.0f records/s)%n%n", records, s, records / s);
    }

    private void reading() throws Exception {
        System.out.println("== reading the whole topic (earliest..latest), wall time and peak RSS of the process");
        System.out.printf("%-6s %-34s %10s %12s %10s %8s%n", "round", "reader", "seconds", "records/s", "MB/s", "RSS MB");
        // both JVM readers start from a class-data-sharing archive of their own (dumped by one untimed run), as
        // bin/kbackfill does (an archive takes jars only: the bench's own jar rather than its classes directory)
        String jarsOnly;
        try (java.util.stream.Stream<Path> jars = Files.list(root.resolve("bench/target"))) {
            jarsOnly = Files.readString(root.resolve("bench/target/classpath.txt")).strip() + ":" + jars
                    .filter(p -> p.getFileName().toString().matches("kbackfill-bench-.*\\.jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no bench jar: run bench/run.sh"));
        }
        Path ours = root.resolve("bench/target/readonly.jsa");
        Path plain = root.resolve("bench/target/rawconsumer.jsa");
        Files.deleteIfExists(ours);
        Files.deleteIfExists(plain);
        time(0, "(untimed: class-data-sharing archive)", List.of("java", "-XX:ArchiveClassesAtExit=" + ours, "-Xmx256m",
                "-cp", jarsOnly, ReadOnly.class.getName(), bootstrap, TOPIC, "decode"), "records=");
        time(0, "(untimed: class-data-sharing archive)", List.of("java", "-XX:ArchiveClassesAtExit=" + plain,
                "-Xmx256m", "-cp", jarsOnly, RawConsumer.class.getName(), bootstrap, TOPIC), "records=");
        for (int r = 1; r <= rounds; r++) {
            time(r, "kcat -C -e -q -f '%k%s\\n'", List.of("bash", "-c", "kcat -C -b " + bootstrap + " -t " + TOPIC
                    + " -o beginning -e -q -f '%k%s\\n' > /dev/null"), null);
            double reference = time(r, "KafkaConsumer loop (-Xmx256m)", List.of("java", "-XX:SharedArchiveFile=" + plain,
                    "-Xmx256m", "-cp", jarsOnly, RawConsumer.class.getName(), bootstrap, TOPIC), "records=");
            double reader = time(r, "kbackfill reader (-Xmx256m)", List.of("java", "-XX:SharedArchiveFile=" + ours,
                    "-Xmx256m", "-cp", jarsOnly, ReadOnly.class.getName(), bootstrap, TOPIC, "raw"), "records=");
            double decoding = time(r, "kbackfill reader + JSON decode", List.of("java", "-XX:SharedArchiveFile=" + ours,
                    "-Xmx256m", "-cp", jarsOnly, ReadOnly.class.getName(), bootstrap, TOPIC, "decode"), "records=");
            // the same decode on the polling thread, as before ReadAhead
            time(r, "  ... decoded on the polling thread", List.of("java", "-XX:SharedArchiveFile=" + ours, "-Xmx256m",
                    "-cp", jarsOnly, ReadOnly.class.getName(), bootstrap, TOPIC, "decode-inline"), "records=");
            System.out.printf(Locale.ROOT, "%-6d %-34s %9.2fx%n", r, "reader vs KafkaConsumer loop", reference / reader);
            System.out.printf(Locale.ROOT, "%-6d %-34s %9.2fx%n", r, "reader + decode / KafkaConsumer loop",
                    decoding / reference);
        }
        // the same orders as Avro (Confluent framing; the registry a loopback server in the reader's process)
        loadAvro();
        Path oursAvro = root.resolve("bench/target/readonly-avro.jsa");
        Files.deleteIfExists(oursAvro);
        time(0, "(untimed: class-data-sharing archive)", List.of("java", "-XX:ArchiveClassesAtExit=" + oursAvro,
                "-Xmx256m", "-cp", jarsOnly, ReadOnly.class.getName(), bootstrap, AVRO_TOPIC, "decode-avro"), "records=");
        for (int r = 1; r <= rounds; r++) {
            double reference = time(r, "KafkaConsumer loop, Avro topic", List.of("java", "-XX:SharedArchiveFile=" + plain,
                    "-Xmx256m", "-cp", jarsOnly, RawConsumer.class.getName(), bootstrap, AVRO_TOPIC), "records=");
            double decoding = time(r, "kbackfill reader + Avro decode", List.of("java", "-XX:SharedArchiveFile=" + oursAvro,
                    "-Xmx256m", "-cp", jarsOnly, ReadOnly.class.getName(), bootstrap, AVRO_TOPIC, "decode-avro"),
                    "records=");
            System.out.printf(Locale.ROOT, "%-6d %-34s %9.2fx%n", r, "reader + Avro / KafkaConsumer loop",
                    decoding / reference);
        }
        System.out.println();
    }

    private static final String AVRO_TOPIC = TOPIC + "-avro";

    /** The topic's records again as Avro, into {@link #AVRO_TOPIC}: the same keys, timestamps and partitioner. */
    private void loadAvro() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(AVRO_TOPIC, PARTITIONS, (short) 1))).all().get();
            Thread.sleep(2000);
        }
        org.apache.avro.Schema schema = new org.apache.avro.Schema.Parser().parse(AVRO_SCHEMA);
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(config, new StringSerializer(),
                new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            for (int i = 0; i < records; i++) {
                p.send(new ProducerRecord<>(AVRO_TOPIC, null, T0.plusSeconds(i).toEpochMilli(), key(i, keys),
                        avro(schema, i, keys)));
            }
            p.flush();
        }
    }

    /**
     * Decode throughput per format on one thread (DecoderBenchmark, JMH, a fork of its own), with the fork's peak
     * RSS: the cost that every sink pays per record read, apart from reading.
     */
    private void decoding() throws Exception {
        System.out.println("== decoding, records/s on one thread (JMH: DecoderBenchmark, 3 x 2 s warm-up, 5 x 2 s)");
        Measured m = measure(List.of("java", "-cp", classpath, "org.openjdk.jmh.Main", DecoderBenchmark.class.getName(),
                "-rf", "csv", "-rff", root.resolve("bench/target/decode.csv").toString()), Map.of());
        for (String line : m.out().split("\n")) {
            if (line.startsWith("DecoderBenchmark.") || line.startsWith("Benchmark ") || line.contains("peak RSS")) {
                System.out.println(line.strip());
            }
        }
        System.out.println();
    }

    /** Runs one reader process; prints and returns its wall seconds (and its peak RSS). */
    private double time(int round, String name, List<String> command, String expect) throws Exception {
        Measured m = measure(command, Map.of());
        if (expect != null && !m.out().contains(expect + records)) {
            throw new IllegalStateException(name + " read something else: " + m.out());
        }
        System.out.printf(Locale.ROOT, "%-6d %-34s %10.2f %12.0f %10.1f %8d%n", round, name, m.seconds(),
                records / m.seconds(), records * 230.0 / m.seconds() / 1e6, m.peakRssKb() / 1024);
        return m.seconds();
    }

    private void postgres() throws Exception {
        System.out.println("== PostgreSQL: upserting every record (newer-wins), wall time and peak RSS of the process");
        String url = SharedPostgres.newDatabase("bench");
        String debeziumClasspath = System.getProperty("bench.debeziumClasspath");
        if (debeziumClasspath != null) {
            loadConnectEnvelopes();
        }
        System.out.printf("%-6s %-48s %10s %12s %8s%n", "round", "writer", "seconds", "records/s", "RSS MB");
        for (int r = 1; r <= rounds; r++) {
            // kbackfill's defaults (the JVM's default heap; the batch sized from it), then within -Xmx256m
            reset(url);
            double defaults = kbackfillPostgres(url, "bench-defaults", Map.of(), r, "kbackfill run, defaults");
            reset(url);
            double ours = kbackfillPostgres(url, "bench", Map.of("KBACKFILL_JAVA_OPTS", "-Xmx256m "
                    + System.getProperty("bench.javaOpts", "")), r, "kbackfill run, -Xmx256m");
            reset(url);
            double pipeline = kcatPsqlPipeline(url);
            row(r, "kcat | psql \\copy, INSERT..SELECT DISTINCT ON", pipeline, 0);
            reset(url);
            double ceiling = copyCeiling(url);
            row(r, "COPY + INSERT..SELECT..ON CONFLICT (no Kafka)", ceiling, 0);
            System.out.printf(Locale.ROOT, "%-6d %-48s %9.2fx / %.2fx%n", r, "kbackfill vs kcat|psql (defaults / -Xmx256m)",
                    pipeline / defaults, pipeline / ours);
            System.out.printf(Locale.ROOT, "%-6d %-48s %10.0f%%%n", r, "kbackfill -Xmx256m / ceiling", 100 * ceiling / ours);
            // the same records into MariaDB and SQLite with defaults, beside PostgreSQL (tables kbackfill creates)
            String maria = dev.kbackfill.testservices.SharedMariaDb.newDatabase("bench_maria_" + r);
            double mariadb = kbackfillOther(maria, r, "kbackfill run into MariaDB, defaults");
            Path sqliteFile = Files.createTempDirectory("bench-sqlite").resolve("bench.db");
            double sqlite = kbackfillOther("jdbc:sqlite:" + sqliteFile, r, "kbackfill run into SQLite, defaults");
            Files.deleteIfExists(sqliteFile);
            System.out.printf(Locale.ROOT, "%-6d %-48s %9.2fx / %.2fx%n", r, "MariaDB / SQLite vs kcat|psql",
                    pipeline / mariadb, pipeline / sqlite);
            if (debeziumClasspath != null) {
                Measured d = debezium(url, debeziumClasspath);
                row(r, "Debezium JDBC sink, Connect standalone", d.seconds(), d.peakRssKb());
                System.out.printf(Locale.ROOT, "%-6d %-48s %9.2fx / %.2fx%n", r, "kbackfill vs Debezium (defaults / -Xmx256m)",
                        d.seconds() / defaults, d.seconds() / ours);
            }
        }
        System.out.println();
        narrowPostgres(url);
    }

    private static final String NARROW_TOPIC = TOPIC + "-narrow";

    /**
     * Narrow records (three small fields: an id, a status, a number), RECORDS of them over RECORDS/10 keys, where
     * PostgreSQL's own work (parsing, the upsert) is most of a pipeline's time: kbackfill with defaults beside the same
     * pipeline shape as above (kcat into an unlogged staging table, one {@code INSERT .. SELECT DISTINCT ON .. ON
     * CONFLICT}), each into a table of its own, the two tables checked equal row for row.
     */
    /** The narrow topic: RECORDS records of three small fields over {@code narrowKeys} keys, one a second. */
    private void loadNarrow(int narrowKeys) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(NARROW_TOPIC, PARTITIONS, (short) 1))).all().get();
            Thread.sleep(2000); // KAFKA-15591
        }
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < records; i++) {
                int key = i % narrowKeys;
                p.send(new ProducerRecord<>(NARROW_TOPIC, null, T0.plusSeconds(i).toEpochMilli(),
                        String.format(Locale.ROOT, "k%07d", key), String.format(Locale.ROOT,
                        "{\"id\":%d,\"status\":\"s%d\",\"n\":%d}", key, i / narrowKeys, i)));
            }
            p.flush();
        }
    }

    private void narrowPostgres(String url) throws Exception {
        int narrowKeys = Math.max(1, records / 10);
        System.out.printf(Locale.ROOT, "== PostgreSQL, narrow records: %d records of three small fields, %d keys%n",
                records, narrowKeys);
        loadNarrow(narrowKeys);
        System.out.printf("%-6s %-48s %10s %12s %8s%n", "round", "writer", "seconds", "records/s", "RSS MB");
        for (int r = 1; r <= rounds; r++) {
            try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
                for (String t : List.of("narrow_kbackfill", "narrow_pipeline", "kbackfill_jobs", "kbackfill_progress")) {
                    s.execute("DROP TABLE IF EXISTS " + t);
                }
                s.execute("CREATE TABLE narrow_pipeline (kafka_key text PRIMARY KEY, id bigint, status text, n bigint, "
                        + "kafka_partition integer, kafka_offset bigint, kafka_timestamp timestamptz)");
            }
            Measured m = measure(List.of(root.resolve("bin/kbackfill").toString(), "run", "--topic", NARROW_TOPIC,
                    "--from", "earliest", "--to", "latest", "--sink", url, "--table", "narrow_kbackfill",
                    "--create-table", "--job", "bench-narrow", "--progress", "none", "--bootstrap-server", bootstrap),
                    Map.of());
            row(r, "kbackfill run, defaults", m.seconds(), m.peakRssKb());
            double pipeline = narrowPipeline(url, narrowKeys);
            row(r, "kcat | psql \\copy, INSERT..SELECT DISTINCT ON", pipeline, 0);
            try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
                 java.sql.ResultSet rs = s.executeQuery("SELECT (SELECT count(*) FROM narrow_kbackfill), "
                         + "(SELECT count(*) FROM (SELECT kafka_key, id, status, n FROM narrow_kbackfill EXCEPT "
                         + "SELECT kafka_key, id, status, n FROM narrow_pipeline) d), "
                         + "(SELECT count(*) FROM (SELECT kafka_key, id, status, n FROM narrow_pipeline EXCEPT "
                         + "SELECT kafka_key, id, status, n FROM narrow_kbackfill) d)")) {
                rs.next();
                if (rs.getLong(1) != narrowKeys || rs.getLong(2) != 0 || rs.getLong(3) != 0) {
                    throw new IllegalStateException("narrow records: kbackfill's table has " + rs.getLong(1)
                            + " rows, " + rs.getLong(2) + " not in the pipeline's, which has " + rs.getLong(3)
                            + " not in kbackfill's");
                }
            }
            System.out.printf(Locale.ROOT, "%-6d %-48s %9.2fx (rows equal)%n", r, "kbackfill vs kcat|psql, narrow",
                    pipeline / m.seconds());
        }
        System.out.println();
    }

    /** The narrow topic through kcat and psql into narrow_pipeline, the wide pipeline's shape; its seconds. */
    private double narrowPipeline(String url, long expectedRows) throws Exception {
        String insert = "INSERT INTO narrow_pipeline SELECT DISTINCT ON (k) k, (j->>'id')::bigint, j->>'status', "
                + "(j->>'n')::bigint, p, o, to_timestamp(ts / 1000.0) FROM (SELECT k, p, o, ts, v::json AS j "
                + "FROM staging) s ORDER BY k, p, o DESC ON CONFLICT (kafka_key) DO UPDATE SET id = EXCLUDED.id, "
                + "status = EXCLUDED.status, n = EXCLUDED.n, kafka_partition = EXCLUDED.kafka_partition, "
                + "kafka_offset = EXCLUDED.kafka_offset, kafka_timestamp = EXCLUDED.kafka_timestamp WHERE "
                + "narrow_pipeline.kafka_offset IS NULL OR (narrow_pipeline.kafka_partition = EXCLUDED.kafka_partition "
                + "AND narrow_pipeline.kafka_offset <= EXCLUDED.kafka_offset) OR (narrow_pipeline.kafka_partition <> "
                + "EXCLUDED.kafka_partition AND narrow_pipeline.kafka_timestamp <= EXCLUDED.kafka_timestamp)";
        return kcatPsqlPipeline(url, NARROW_TOPIC, insert, "narrow_pipeline", expectedRows);
    }

    /** One kbackfill run into bench_orders (a batch size from -Dbench.batchSize if set), checked; its seconds. */
    private double kbackfillPostgres(String url, String job, Map<String, String> env, int round, String label)
            throws Exception {
        List<String> run = new ArrayList<>(List.of(root.resolve("bin/kbackfill").toString(), "run", "--topic", TOPIC,
                "--from", "earliest", "--to", "latest", "--sink", url, "--table", "bench_orders", "--create-table",
                "--job", job, "--progress", "none", "--bootstrap-server", bootstrap));
        if (System.getProperty("bench.batchSize") != null) {
            run.addAll(List.of("--batch-size", System.getProperty("bench.batchSize")));
        }
        Measured m = measure(run, env);
        checkTable(url, "bench_orders", "kbackfill");
        row(round, label, m.seconds(), m.peakRssKb());
        return m.seconds();
    }

    /**
     * One kbackfill run with defaults into another database (a table it creates), checked for every key with its
     * last status; its seconds.
     */
    private double kbackfillOther(String url, int round, String label) throws Exception {
        Measured m = measure(List.of(root.resolve("bin/kbackfill").toString(), "run", "--topic", TOPIC, "--from",
                "earliest", "--to", "latest", "--sink", url, "--table", "bench_orders", "--create-table", "--job",
                "bench-other", "--progress", "none", "--bootstrap-server", bootstrap), Map.of());
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT count(*), SUM(CASE WHEN status = 'status-4' THEN 1 ELSE 0 END) "
                     + "FROM bench_orders")) {
            rs.next();
            if (rs.getLong(1) != keys || rs.getLong(2) != keys) {
                throw new IllegalStateException(label + " left " + rs.getLong(1) + " rows (" + rs.getLong(2)
                        + " with their last value), not " + keys);
            }
        }
        row(round, label, m.seconds(), m.peakRssKb());
        return m.seconds();
    }

    private void row(int round, String writer, double seconds, long rssKb) {
        System.out.printf(Locale.ROOT, "%-6d %-48s %10.2f %12.0f %8s%n", round, writer, seconds, records / seconds,
                rssKb == 0 ? "" : String.valueOf(rssKb / 1024));
    }

    /** Fails unless the table holds one row per key with its last value (the records hold five updates per key). */
    /** A table of {@code rows} keys, each updated five times, holds every key with its fifth (last) status. */
    private static void checkTable(String url, String table, String writer, long rows) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT count(*), count(*) FILTER (WHERE status = 'status-4') FROM "
                     + table)) {
            rs.next();
            if (rs.getLong(1) != rows || rs.getLong(2) != rows) {
                throw new IllegalStateException(writer + " left " + rs.getLong(1) + " rows (" + rs.getLong(2)
                        + " with their last value) in " + table + ", not " + rows);
            }
        }
    }

    private void checkTable(String url, String table, String writer) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT count(*), count(*) FILTER (WHERE status = 'status-"
                     + ((records - 1) / keys) + "') FROM " + table)) {
            rs.next();
            if (rs.getLong(1) != keys || (records % keys == 0 && rs.getLong(2) != keys)) {
                throw new IllegalStateException(writer + " left " + rs.getLong(1) + " rows (" + rs.getLong(2)
                        + " with their last value) in " + table + ", not " + keys);
            }
        }
    }

    /**
     * Beside a live writer: the table a pipeline keeps (every row of the topic's keys, none carrying kbackfill's
     * version) and two runs into it, each beside the same run that does not look at the log ({@code --live-writer
     * no}: how a run met such rows before): a gap of the first 1% of the log before a tail of 99%, and the last 1%
     * (the cron case, the range ending at the log's end). PostgreSQL, defaults.
     */
    private void live() throws Exception {
        System.out.println("== Beside a live writer: a run that reads the log for its keys' newest records, and the "
                + "same run without (--live-writer no), PostgreSQL, defaults");
        System.out.printf("%-6s %-56s %10s %12s %8s%n", "round", "run", "seconds", "records/s", "RSS MB");
        String url = SharedPostgres.newDatabase("bench_live");
        long percent = records / 100;
        String gapEnd = T0.plusSeconds(percent).toString();
        String tailStart = T0.plusSeconds(records - percent).toString();
        for (int r = 1; r <= rounds; r++) {
            for (String[] c : new String[][] {{"gap of 1% before a tail of 99%", T0.toString(), gapEnd},
                    {"the last 1% (cron: no tail)", tailStart, "latest"}}) {
                for (String writer : new String[] {"auto", "no"}) {
                    liveTable(url);
                    Measured m = measure(List.of(root.resolve("bin/kbackfill").toString(), "run", "--topic", TOPIC,
                            "--from", c[1], "--to", c[2], "--sink", url, "--table", "bench_live", "--live-writer",
                            writer, "--job", "live-" + r + writer + c[1], "--progress", "none", "--bootstrap-server",
                            bootstrap), Map.of());
                    String label = c[0] + ", --live-writer " + writer;
                    System.out.printf(Locale.ROOT, "%-6d %-56s %10.2f %12.0f %8d%n", r, label, m.seconds(),
                            percent / m.seconds(), m.peakRssKb() / 1024);
                    String summary = m.out().lines().filter(l -> l.startsWith("total")).findFirst().orElse("");
                    System.out.println("       " + summary.replaceAll(" +", " "));
                }
            }
        }
        System.out.println();
    }

    /**
     * The pipeline's table: the topic's whole history upserted by kbackfill, then every row's version columns cleared,
     * as rows another writer wrote carry none.
     */
    private void liveTable(String url) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS bench_live");
            s.execute("DROP TABLE IF EXISTS bench_live_kbackfill_deletes");
            s.execute("DROP TABLE IF EXISTS kbackfill_jobs");
            s.execute("DROP TABLE IF EXISTS kbackfill_progress");
        }
        Measured load = measure(List.of(root.resolve("bin/kbackfill").toString(), "run", "--topic", TOPIC, "--from",
                "earliest", "--to", "latest", "--sink", url, "--table", "bench_live", "--create-table", "--job",
                "live-load", "--live-writer", "no", "--progress", "none", "--bootstrap-server", bootstrap), Map.of());
        if (!load.out().contains("wrote")) {
            throw new IllegalStateException("the live table was not loaded: " + load.out());
        }
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("UPDATE bench_live SET kafka_offset = NULL, kafka_partition = NULL, kafka_timestamp = NULL, "
                    + "kafka_log_time = NULL, kafka_topic = NULL");
            s.execute("VACUUM ANALYZE bench_live");
        }
    }

    private static final String CONNECT_TOPIC = TOPIC + "-connect";

    /**
     * The same records again for Kafka Connect: its JSON converter gives a typed sink such as Debezium's a schema
     * only from the envelope {@code {"schema": .., "payload": ..}}; same keys, timestamps and partitioner.
     */
    private void loadConnectEnvelopes() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(CONNECT_TOPIC, PARTITIONS, (short) 1))).all().get();
            Thread.sleep(2000);
        }
        StringBuilder fields = new StringBuilder();
        String[][] columns = {{"order_id", "string"}, {"customer", "string"}, {"status", "string"}, {"amount", "double"},
                {"currency", "string"}, {"items", "int64"}, {"channel", "string"}, {"updated_at", "string"},
                {"note", "string"}};
        for (String[] c : columns) {
            fields.append(fields.length() == 0 ? "" : ",").append("{\"field\":\"").append(c[0]).append("\",\"type\":\"")
                    .append(c[1]).append("\",\"optional\":true}");
        }
        String schema = "{\"type\":\"struct\",\"name\":\"order\",\"optional\":false,\"fields\":[" + fields + "]}";
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < records; i++) {
                p.send(new ProducerRecord<>(CONNECT_TOPIC, null, T0.plusSeconds(i).toEpochMilli(), key(i, keys),
                        "{\"schema\":" + schema + ",\"payload\":" + json(i, keys) + "}"));
            }
            p.flush();
        }
    }

    /**
     * The Debezium JDBC sink (upsert by record key, its reduction buffer on, batches of 10,000, the records'
     * partition, offset and timestamp added by InsertField as kbackfill stores them) on Kafka Connect standalone
     * with connect-standalone.sh's heap, into a table like kbackfill's; timed from the process start until the
     * connector's committed offsets reach the end of every partition, then stopped.
     */
    private Measured debezium(String url, String classpath) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS dbz_orders");
            s.execute("CREATE TABLE dbz_orders (LIKE bench_orders INCLUDING ALL)");
        }
        Path dir = Files.createTempDirectory("kbackfill-bench-connect");
        String name = "dbz-bench-" + System.nanoTime();
        writeDebeziumConfig(dir, name, url);
        ProcessBuilder pb = new ProcessBuilder("java", "-Xms256m",
                "-Xmx2g", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath,
                "org.apache.kafka.connect.cli.ConnectStandalone", dir.resolve("worker.properties").toString(),
                dir.resolve("connector.properties").toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("connect.log").toFile());
        long started = System.nanoTime();
        Process p = pb.start();
        double seconds;
        long kb;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> ends = new java.util.HashMap<>();
            for (int q = 0; q < PARTITIONS; q++) {
                ends.put(new org.apache.kafka.common.TopicPartition(CONNECT_TOPIC, q),
                        org.apache.kafka.clients.admin.OffsetSpec.latest());
            }
            long end = 0;
            for (var e : admin.listOffsets(ends).all().get().values()) {
                end += e.offset();
            }
            long deadline = started + TimeUnit.MINUTES.toNanos(20);
            while (true) {
                long committed = 0;
                for (var o : admin.listConsumerGroupOffsets("connect-" + name).partitionsToOffsetAndMetadata().get()
                        .values()) {
                    committed += o == null ? 0 : o.offset();
                }
                if (committed >= end) {
                    seconds = (System.nanoTime() - started) / 1e9;
                    // the process's peak resident memory so far (it is stopped next)
                    kb = Long.parseLong(Files.readAllLines(Path.of("/proc/" + p.pid() + "/status")).stream()
                            .filter(l -> l.startsWith("VmHWM:")).findFirst().orElseThrow().replaceAll("\\D", ""));
                    break;
                }
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("Debezium did not finish (" + committed + " of " + end
                            + " offsets committed); its log: " + dir.resolve("connect.log"));
                }
                Thread.sleep(100);
            }
        } finally {
            p.destroy();
            p.waitFor(60, TimeUnit.SECONDS);
            p.destroyForcibly();
        }
        checkTable(url, "dbz_orders", "Debezium");
        exec(List.of("rm", "-rf", dir.toString()), Map.of());
        return new Measured(seconds, kb, "");
    }

    /** The standalone worker's and the Debezium JDBC sink connector's settings, into {@code dir}. */
    private void writeDebeziumConfig(Path dir, String name, String url) throws IOException {
        Files.writeString(dir.resolve("worker.properties"), String.join("\n",
                "bootstrap.servers=" + bootstrap,
                "key.converter=org.apache.kafka.connect.storage.StringConverter",
                "value.converter=org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable=true",
                "offset.storage.file.filename=" + dir.resolve("offsets"),
                "offset.flush.interval.ms=1000",
                "consumer.max.poll.records=10000",
                "listeners=http://127.0.0.1:0",
                "plugin.discovery=only_scan", ""));
        Files.writeString(dir.resolve("connector.properties"), String.join("\n",
                "name=" + name,
                "connector.class=io.debezium.connector.jdbc.JdbcSinkConnector",
                "tasks.max=1",
                "topics=" + CONNECT_TOPIC,
                "connection.url=" + url.substring(0, url.indexOf('?')),
                "connection.username=postgres",
                "connection.password=postgres",
                "insert.mode=upsert",
                "primary.key.mode=record_key",
                "primary.key.fields=kafka_key",
                "schema.evolution=none",
                "table.name.format=dbz_orders",
                "batch.size=10000",
                "use.reduction.buffer=true",
                "transforms=key,meta",
                "transforms.key.type=org.apache.kafka.connect.transforms.HoistField$Key",
                "transforms.key.field=kafka_key",
                "transforms.meta.type=org.apache.kafka.connect.transforms.InsertField$Value",
                "transforms.meta.partition.field=kafka_partition",
                "transforms.meta.offset.field=kafka_offset",
                "transforms.meta.timestamp.field=kafka_timestamp", ""));
    }

    /**
     * kbackfill into Delta against Spark local[2] (read the same range from Kafka, last record per key, write or
     * MERGE), each a process of its own: cold = a new table, warm = the same range again into the existing table.
     */
    private void delta() throws Exception {
        String sparkClasspath = System.getProperty("bench.sparkClasspath");
        if (sparkClasspath == null) {
            throw new IllegalStateException("bench.sparkClasspath is not set: run bench/run.sh");
        }
        System.out.println("== Delta Lake: the whole topic, last value per key, wall time and peak RSS of each process");
        List<String> spark = sparkCommand(sparkClasspath);
        spark.addAll(List.of(bootstrap, TOPIC));
        spark.addAll(sparkOffsets(TOPIC));
        Map<String, String> heap = Map.of("KBACKFILL_JAVA_OPTS", "-Xmx1g");
        System.out.printf("%-6s %-44s %10s %8s%n", "round", "writer", "seconds", "RSS MB");
        for (int r = 1; r <= rounds; r++) {
            Path dir = Files.createTempDirectory("kbackfill-bench-delta");
            String ours = dir.resolve("ours").toString();
            String theirs = dir.resolve("spark").toString();
            Measured coldOurs = measure(kbackfillDelta(TOPIC, "latest", ours, "bench-delta"), heap);
            List<String> create = new ArrayList<>(spark);
            create.addAll(List.of(theirs, "create"));
            Measured coldSpark = measure(create, Map.of());
            Measured warmOurs = measure(kbackfillDelta(TOPIC, "latest", ours, "bench-delta-again"), heap);
            List<String> merge = new ArrayList<>(spark);
            merge.addAll(List.of(theirs, "merge"));
            Measured warmSpark = measure(merge, Map.of());
            // a fixed range (a time after every record), finished: the rerun must do nothing
            timed(kbackfillDelta(TOPIC, "2099-01-01", dir.resolve("fixed").toString(), "bench-delta-fixed"));
            double noop = timed(kbackfillDelta(TOPIC, "2099-01-01", dir.resolve("fixed").toString(), "bench-delta-fixed"));
            // the same launcher doing nothing but start: what the no-op spends beyond it is its work
            double start = timed(List.of(root.resolve("bin/kbackfill").toString(), "--version"));
            deltaRow(r, "kbackfill, new table (cold)", coldOurs, "");
            deltaRow(r, "Spark, new table (cold)", coldSpark, "   (" + coldSpark.out().strip() + ")");
            deltaRow(r, "kbackfill, same range again (warm, merge)", warmOurs, "");
            deltaRow(r, "Spark MERGE, same range again", warmSpark, "   (" + warmSpark.out().strip() + ")");
            System.out.printf(Locale.ROOT, "%-6d %-44s %10.2f%n", r, "kbackfill, finished fixed job rerun (no-op)", noop);
            System.out.printf(Locale.ROOT, "%-6d %-44s %10.2f   (work beyond JVM start: %.2f s)%n", r,
                    "kbackfill --version (JVM start)", start, noop - start);
            System.out.printf(Locale.ROOT, "%-6d %-44s %9.1fx / %.1fx%n", r, "Spark / kbackfill (cold / warm)",
                    coldSpark.seconds() / coldOurs.seconds(), warmSpark.seconds() / warmOurs.seconds());
        }
    }

    private static void deltaRow(int round, String writer, Measured m, String more) {
        System.out.printf(Locale.ROOT, "%-6d %-44s %10.2f %8d%s%n", round, writer, m.seconds(), m.peakRssKb() / 1024,
                more);
    }

    /**
     * kbackfill into Iceberg against Spark 4.1 local[2] with Iceberg 1.12 (issue 22), each a process of its own, wall
     * time and peak RSS: the whole topic (five records per key) into a new table and the same range again (Spark:
     * create, then MERGE); then tables of RECORDS and 10x RECORDS rows (every key once, written by each side into
     * its own table, each in -Xmx2g) and a backfill touching 1% of their keys (kbackfill in -Xmx512m; Spark MERGE, merge-on-read).
     * Every table is counted afterwards.
     */
    private void iceberg() throws Exception {
        String cp = System.getProperty("bench.sparkIcebergClasspath");
        if (cp == null) {
            throw new IllegalStateException("bench.sparkIcebergClasspath is not set: run bench/run.sh");
        }
        System.out.println("== Iceberg: kbackfill against Spark local[2] + Iceberg 1.12, wall time and peak RSS of each process");
        System.out.printf("%-10s %-46s %9s %9s%n", "round", "run", "seconds", "RSS MB");
        // the peer's heap (sparkCommand: -Xmx2g); with a bound, bin/kbackfill keeps the JVM's collector (G1). Until
        // 2026-12-07 this was -Xmx1g, half Spark's: 10M rows every key once 78.6 s (26 full collections) against
        // 63.4 s in -Xmx2g, by hand on one broker
        Map<String, String> heap = Map.of("KBACKFILL_JAVA_OPTS", "-Xmx2g");
        for (int r = 1; r <= rounds; r++) {
            Path warehouse = Files.createTempDirectory("kbackfill-bench-iceberg");
            Measured cold = measure(kbackfillIceberg(TOPIC, "latest", warehouse, "ours", "bench-iceberg"), heap);
            print(r, "kbackfill, new table (" + records / keys + " records per key)", cold);
            List<String> offsets = sparkOffsets(TOPIC);
            Measured sparkCold = measure(sparkIceberg(cp, TOPIC, offsets, warehouse, "spark", "create"), Map.of());
            print(r, "Spark, new table", sparkCold);
            Measured warm = measure(kbackfillIceberg(TOPIC, "latest", warehouse, "ours", "bench-iceberg-again"), heap);
            print(r, "kbackfill, same range again (all kept out)", warm);
            Measured sparkWarm = measure(sparkIceberg(cp, TOPIC, offsets, warehouse, "spark", "merge"), Map.of());
            print(r, "Spark MERGE, same range again", sparkWarm);
            checkIceberg(warehouse, "ours", keys);
            System.out.printf(Locale.ROOT, "%-10d %-46s %8.1fx / %.1fx   (Spark: %s / %s)%n", r,
                    "Spark / kbackfill (new / again)", sparkCold.seconds() / cold.seconds(),
                    sparkWarm.seconds() / warm.seconds(), sparkCold.out().strip(), sparkWarm.out().strip());
            exec(List.of("rm", "-rf", warehouse.toString()), Map.of());
        }
        // growth: every key once, then 1% touched
        int[] sizes = icebergSizes();
        String base = "iceberg-growth";
        loadGrowth(base, sizes, 17);
        System.out.printf("%-10s %-46s %9s %9s%n", "table", "run", "seconds", "RSS MB");
        for (int n : sizes) {
            Path warehouse = Files.createTempDirectory("kbackfill-bench-iceberg-growth");
            StringBuilder to = new StringBuilder("{\"" + base + "\":{");
            StringBuilder from = new StringBuilder("{\"" + base + "\":{");
            for (int q = 0; q < PARTITIONS; q++) {
                to.append(q == 0 ? "" : ",").append('"').append(q).append("\":").append(n / PARTITIONS);
                from.append(q == 0 ? "" : ",").append('"').append(q).append("\":-2");
            }
            to.append("}}");
            from.append("}}");
            Measured create = measure(kbackfillIceberg(base, to.toString(), warehouse, "ours", "create"), heap);
            print(n, "kbackfill, new table (every key once)", create);
            Measured sparkCreate = measure(sparkIceberg(cp, base, List.of(from.toString(), to.toString()), warehouse,
                    "spark", "create"), Map.of());
            print(n, "Spark, new table (every key once)", sparkCreate);
            String touch = base + "-touch-" + n;
            Measured ours = measure(kbackfillIceberg(touch, "latest", warehouse, "ours", "touch"),
                    Map.of("KBACKFILL_JAVA_OPTS", "-Xmx512m"));
            print(n, "kbackfill, 1% touched (-Xmx512m)", ours);
            Measured theirs = measure(sparkIceberg(cp, touch, sparkOffsets(touch), warehouse, "spark", "merge"), Map.of());
            print(n, "Spark local[2] MERGE, 1% touched", theirs);
            Measured cow = measure(sparkIceberg(cp, touch, sparkOffsets(touch), warehouse, "spark", "merge-cow"),
                    Map.of());
            print(n, "Spark MERGE copy-on-write, the same 1% again", cow);
            checkIceberg(warehouse, "ours", n);
            System.out.printf(Locale.ROOT, "%-10d %-46s %8.1fx / %.1fx   (Spark: %s / %s)%n", n,
                    "Spark / kbackfill (new / 1% touched)", sparkCreate.seconds() / create.seconds(),
                    theirs.seconds() / ours.seconds(), sparkCreate.out().strip(), theirs.out().strip());
            exec(List.of("rm", "-rf", warehouse.toString()), Map.of());
        }
        System.out.println();
    }

    /** For experiments by hand: loads {@code served}, then keeps the broker up until this process's input closes. */
    private void serve(List<String> served) throws Exception {
        List<String> topics = new ArrayList<>();
        if (served.contains("wide")) {
            topics.add(TOPIC);
        }
        if (served.contains("avro")) {
            loadAvro();
            topics.add(AVRO_TOPIC);
        }
        if (served.contains("narrow")) {
            loadNarrow(Math.max(1, records / 10));
            topics.add(NARROW_TOPIC);
        }
        if (served.contains("growth")) {
            loadGrowth("iceberg-growth", icebergSizes(), 17);
            topics.add("iceberg-growth (every key once, " + icebergSizes()[icebergSizes().length - 1]
                    + " records) and its -touch- topics");
        }
        if (served.contains("partitioned")) {
            int[] sizes = partitionedSizes();
            loadPartitioned("partitioned", sizes);
            topics.add("partitioned-N and partitioned-touch-N (the partitioned bench's, N = " + sizes[0] + " and "
                    + sizes[1] + ")");
        }
        System.out.println("PostgreSQL at " + SharedPostgres.newDatabase("bench_serve"));
        System.out.println("serving topics " + String.join(", ", topics) + " at " + bootstrap
                + " until end of input");
        System.in.transferTo(java.io.OutputStream.nullOutputStream());
    }

    /** -Dbench.icebergSizes=1,10 (default): the Iceberg growth tables' sizes in RECORDS (whole partitions). */
    private int[] icebergSizes() {
        int unit = records / PARTITIONS * PARTITIONS;
        return java.util.Arrays.stream(System.getProperty("bench.icebergSizes", "1,10").split(","))
                .mapToInt(m -> Integer.parseInt(m.strip()) * unit).toArray();
    }

    /**
     * The growth benchmarks' topics: {@code base} with every key once up to the largest size (key i in partition
     * i % PARTITIONS, so that the first N records are the first N / PARTITIONS of each partition), and per size a
     * topic {@code base-touch-N} with a second version of 1% of that size's keys, chosen at random by {@code seed}.
     */
    private void loadGrowth(String base, int[] sizes, long seed) throws Exception {
        int largest = sizes[sizes.length - 1];
        Map<String, String> retained = Map.of("retention.ms", "-1");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            List<NewTopic> topics = new ArrayList<>(List.of(new NewTopic(base, PARTITIONS, (short) 1).configs(retained)));
            for (int n : sizes) {
                topics.add(new NewTopic(base + "-touch-" + n, PARTITIONS, (short) 1).configs(retained));
            }
            admin.createTopics(topics).all().get();
            Thread.sleep(2000);
        }
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.LINGER_MS_CONFIG, 20,
                ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024, ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        java.util.Random random = new java.util.Random(seed);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            // key i in partition i % PARTITIONS: the first N records are the first N / PARTITIONS of each partition
            for (int i = 0; i < largest; i++) {
                p.send(new ProducerRecord<>(base, i % PARTITIONS, T0.plusSeconds(i).toEpochMilli(), key(i, largest),
                        json(i, largest)));
            }
            for (int n : sizes) {
                int[] touched = random.ints(0, n).distinct().limit(n / 100).toArray();
                for (int j = 0; j < touched.length; j++) {
                    int update = touched[j] + largest; // the same key, its second version
                    p.send(new ProducerRecord<>(base + "-touch-" + n, null, T0.plusSeconds(largest + j).toEpochMilli(),
                            key(update, largest), json(update, largest)));
                }
            }
            p.flush();
        }
    }

    private List<String> kbackfillIceberg(String topic, String to, Path warehouse, String table, String job,
                                          String... more) {
        List<String> command = new ArrayList<>(List.of(root.resolve("bin/kbackfill").toString(), "run", "--topic",
                topic, "--from", "earliest", "--to", to, "--sink", "iceberg:hadoop:" + warehouse + "#db." + table,
                "--create-table", "--job", job, "--progress", "none", "--bootstrap-server", bootstrap));
        command.addAll(List.of(more));
        return command;
    }

    /**
     * The cron case (issue 43): topics of 1,000 and 10,000 order records (each key updated five times), each
     * backfilled end to end, process start to exit, by {@code bin/kbackfill} into SQLite, PostgreSQL and a new Delta
     * table, on the JDK that runs the bench (17: the CDS archive) and, where the build made its AOT cache, on that
     * JDK 25, and on each with the quick compiler only ({@code -XX:TieredStopAtLevel=1}); beside them the peers a cron
     * user would script: {@code kcat | psql} (copy, one upsert) and Spark
     * local[2]'s batch job into a new Delta table; and {@code plan} and {@code status}. ROUNDS rounds, each figure
     * once a round, the JDKs alternating.
     */
    private void cron() throws Exception {
        int[] sizes = {1000, 10_000};
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            List<NewTopic> topics = new ArrayList<>();
            for (int n : sizes) {
                topics.add(new NewTopic("cron-" + n, 1, (short) 1).configs(Map.of("retention.ms", "-1")));
            }
            admin.createTopics(topics).all().get();
            Thread.sleep(2000);
        }
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int n : sizes) {
                for (int i = 0; i < n; i++) {
                    p.send(new ProducerRecord<>("cron-" + n, 0, T0.plusSeconds(i).toEpochMilli(), key(i, n / 5),
                            json(i, n / 5)));
                }
            }
            p.flush();
        }
        Path aotJava = root.resolve("backfill-cli/target/kbackfill.aot.java");
        Map<String, Map<String, String>> jdks = new java.util.LinkedHashMap<>();
        jdks.put("JDK " + Runtime.version().feature() + " + CDS", Map.of());
        // the quick compiler only: the knob docs/operations.md gives a cron job of short runs
        jdks.put("JDK " + Runtime.version().feature() + " + CDS, C1 only", Map.of("KBACKFILL_JAVA_OPTS",
                "-XX:TieredStopAtLevel=1"));
        if (Files.exists(aotJava)) {
            Path java = Path.of(Files.readString(aotJava).strip());
            jdks.put("JDK 25 + AOT cache", Map.of("JAVA_HOME", java.getParent().getParent().toString()));
            jdks.put("JDK 25 + AOT cache, C1 only", Map.of("JAVA_HOME", java.getParent().getParent().toString(),
                    "KBACKFILL_JAVA_OPTS", "-XX:TieredStopAtLevel=1"));
        }
        String url = SharedPostgres.newDatabase("bench_cron");
        String sparkClasspath = System.getProperty("bench.sparkClasspath");
        System.out.println("== The cron case: short runs end to end (process start to exit), wall time and peak RSS");
        System.out.printf("%-6s %-8s %-52s %9s %9s%n", "round", "records", "run", "seconds", "RSS MB");
        for (int r = 1; r <= rounds; r++) {
            for (int n : sizes) {
                String topic = "cron-" + n;
                for (Map.Entry<String, Map<String, String>> jdk : jdks.entrySet()) {
                    Path dir = Files.createTempDirectory("kbackfill-bench-cron");
                    cronRow(r, n, jdk.getKey() + ", SQLite", measure(cronRun(topic, "jdbc:sqlite:" + dir.resolve("db"),
                            "bench_orders"), jdk.getValue()));
                    reset(url);
                    cronRow(r, n, jdk.getKey() + ", PostgreSQL", measure(cronRun(topic, url, "bench_orders"),
                            jdk.getValue()));
                    checkTable(url, "bench_orders", "kbackfill", n / 5);
                    cronRow(r, n, jdk.getKey() + ", Delta", measure(cronRun(topic, "delta:" + dir.resolve("delta"),
                            null), jdk.getValue()));
                    cronRow(r, n, jdk.getKey() + ", plan", measure(List.of(root.resolve("bin/kbackfill").toString(),
                            "plan", "--topic", topic, "--from", "earliest", "--to", "latest", "--bootstrap-server",
                            bootstrap), jdk.getValue()));
                    cronRow(r, n, jdk.getKey() + ", status", measure(List.of(root.resolve("bin/kbackfill").toString(),
                            "status", "--sink", "delta:" + dir.resolve("delta"), "--job", "cron"), jdk.getValue()));
                    exec(List.of("rm", "-rf", dir.toString()), Map.of());
                }
                reset(url);
                long t = System.nanoTime();
                kcatPsqlPipeline(url, topic, n / 5);
                System.out.printf(Locale.ROOT, "%-6d %-8d %-52s %9.2f %9s%n", r, n, "kcat | psql \\copy + one upsert",
                        (System.nanoTime() - t) / 1e9, "-");
                if (sparkClasspath != null) {
                    Path dir = Files.createTempDirectory("kbackfill-bench-cron-spark");
                    List<String> spark = sparkCommand(sparkClasspath);
                    spark.addAll(List.of(bootstrap, topic));
                    spark.addAll(sparkOffsets(topic));
                    spark.addAll(List.of(dir.resolve("spark").toString(), "create"));
                    cronRow(r, n, "Spark local[2] batch job, new Delta table", measure(spark, Map.of()));
                    exec(List.of("rm", "-rf", dir.toString()), Map.of());
                }
            }
        }
        System.out.println();
    }

    private List<String> cronRun(String topic, String sink, String table) {
        List<String> run = new ArrayList<>(List.of(root.resolve("bin/kbackfill").toString(), "run", "--topic", topic,
                "--from", "earliest", "--to", "latest", "--sink", sink, "--create-table", "--job", "cron",
                "--progress", "none", "--bootstrap-server", bootstrap));
        if (table != null) {
            run.addAll(List.of("--table", table));
        }
        return run;
    }

    private static void cronRow(int round, int records, String run, Measured m) {
        System.out.printf(Locale.ROOT, "%-6d %-8d %-52s %9.2f %9d%n", round, records, run, m.seconds(),
                m.peakRssKb() / 1024);
    }

    /** Days of the partitioned bench's tables: a day is 1% of a table. */
    private static final int DAYS = 100;
    /** The day the partitioned bench's backfill touches. */
    private static final int TOUCHED_DAY = 50;

    /** The day of key {@code i} of a table of {@code n} keys: ids grow with time, so a day is a range of ids. */
    private static String dayOf(int i, int n) {
        return java.time.LocalDate.of(2024, 1, 1).plusDays(i / (n / DAYS)).toString();
    }

    /** Order {@code i} of {@link #json} with its {@code day} (of a table of {@code n} keys) in front. */
    private static String dayJson(int i, int n) {
        return "{\"day\":\"" + dayOf(i % n, n) + "\"," + json(i, n).substring(1);
    }

    /** The partitioned bench's two table sizes: RECORDS/10 and RECORDS, in whole days of whole partitions. */
    private int[] partitionedSizes() {
        int small = records / 10 / (PARTITIONS * DAYS) * (PARTITIONS * DAYS);
        return new int[] {small, 10 * small};
    }

    /**
     * For each size N: topic {@code BASE-N} with keys 0..N-1 once each (key i in partition i % PARTITIONS, its day
     * {@link #dayOf}), and {@code BASE-touch-N} with the second version of every key of day {@link #TOUCHED_DAY}
     * (1% of the table, its day unchanged).
     */
    private void loadPartitioned(String base, int[] sizes) throws Exception {
        Map<String, String> retained = Map.of("retention.ms", "-1");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            List<NewTopic> topics = new ArrayList<>();
            for (int n : sizes) {
                topics.add(new NewTopic(base + "-" + n, PARTITIONS, (short) 1).configs(retained));
                topics.add(new NewTopic(base + "-touch-" + n, PARTITIONS, (short) 1).configs(retained));
            }
            admin.createTopics(topics).all().get();
            Thread.sleep(2000);
        }
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.LINGER_MS_CONFIG, 20,
                ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024, ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int n : sizes) {
                for (int i = 0; i < n; i++) {
                    p.send(new ProducerRecord<>(base + "-" + n, i % PARTITIONS, T0.plusSeconds(i).toEpochMilli(),
                            key(i, n), dayJson(i, n)));
                }
                int perDay = n / DAYS;
                for (int k = TOUCHED_DAY * perDay; k < (TOUCHED_DAY + 1) * perDay; k++) {
                    p.send(new ProducerRecord<>(base + "-touch-" + n, null, T0.plusSeconds(n + k).toEpochMilli(),
                            key(k, n), dayJson(k + n, n)));
                }
            }
            p.flush();
        }
    }

    /**
     * Lake tables partitioned by day (issue 39): a table of N rows over {@value #DAYS} days, every key once, then a
     * backfill of one day's keys (1% of the table), kbackfill against Spark local[2]'s MERGE told that day (its
     * partition predicate: the best a Spark user can do), Delta and Iceberg, at RECORDS/10 and RECORDS rows. Keyed
     * by the record key, kbackfill finds the day's files by their key statistics; keyed by (day, order_id), the
     * partition derives from the key and it probes that one partition. Wall time and peak RSS of every process; every
     * kbackfill table is counted after its touch.
     */
    private void partitioned() throws Exception {
        String deltaCp = System.getProperty("bench.sparkClasspath");
        String icebergCp = System.getProperty("bench.sparkIcebergClasspath");
        int[] sizes = partitionedSizes();
        String base = "partitioned";
        long started = System.nanoTime();
        loadPartitioned(base, sizes);
        System.out.printf(Locale.ROOT, "== Lake tables partitioned by day, 1%% (one day) touched: %d and %d rows "
                + "loaded in %.0f s%n", sizes[0], sizes[1], (System.nanoTime() - started) / 1e9);
        System.out.printf("%-10s %-62s %9s %9s%n", "table", "run", "seconds", "RSS MB");
        String day = java.time.LocalDate.of(2024, 1, 1).plusDays(TOUCHED_DAY).toString();
        for (int n : sizes) {
            String topic = base + "-" + n;
            String touch = base + "-touch-" + n;
            List<String> touchOffsets = sparkOffsets(touch);
            List<String> tableOffsets = sparkOffsets(topic);
            for (boolean derived : new boolean[] {false, true}) {
                String keying = derived ? "key (day, order_id)" : "record key";
                String[] keyArgs = derived ? new String[] {"--key-fields", "day,order_id"} : new String[0];
                String keyColumns = derived ? "day,order_id" : "kafka_key";
                Path dir = Files.createTempDirectory("kbackfill-bench-partitioned");
                // Delta
                String ours = dir.resolve("ours").toString();
                List<String> create = new ArrayList<>(kbackfillDelta(topic, "latest", ours, "create", "--partition-by", "day"));
                create.addAll(List.of(keyArgs));
                printWide(n, "Delta, kbackfill new table (" + keying + ")", measure(create, Map.of("KBACKFILL_JAVA_OPTS", "-Xmx1g")));
                exec(List.of("cp", "-r", ours, dir.resolve("spark").toString()), Map.of());
                List<String> touchRun = new ArrayList<>(kbackfillDelta(touch, "latest", ours, "touch"));
                touchRun.addAll(List.of(keyArgs));
                Measured ourTouch = measure(touchRun, Map.of("KBACKFILL_JAVA_OPTS", "-Xmx512m"));
                printWide(n, "Delta, kbackfill 1% touched (" + keying + ", -Xmx512m)", ourTouch);
                long rows = dev.kbackfill.sink.delta.DeltaTableRows.count(ours);
                if (rows != n) {
                    throw new IllegalStateException(ours + " holds " + rows + " rows, not " + n);
                }
                if (deltaCp != null) {
                    List<String> merge = sparkCommand(deltaCp);
                    merge.addAll(List.of(bootstrap, touch));
                    merge.addAll(touchOffsets);
                    merge.addAll(List.of(dir.resolve("spark").toString(), "merge-day:" + day + ":" + keyColumns));
                    Measured theirs = measure(merge, Map.of());
                    printWide(n, "Delta, Spark MERGE 1% touched (told the day)", theirs);
                    System.out.printf(Locale.ROOT, "%-10d %-62s %9.1fx   (Spark: %s)%n", n, "Delta, Spark / kbackfill",
                            theirs.seconds() / ourTouch.seconds(), theirs.out().strip());
                }
                // Iceberg: kbackfill's table and Spark's own, each partitioned by day (identity)
                Path warehouse = dir.resolve("warehouse");
                List<String> icebergCreate = new ArrayList<>(kbackfillIceberg(topic, "latest", warehouse, "ours",
                        "create", "--partition-by", "day"));
                icebergCreate.addAll(List.of(keyArgs));
                printWide(n, "Iceberg, kbackfill new table (" + keying + ")", measure(icebergCreate,
                        Map.of("KBACKFILL_JAVA_OPTS", "-Xmx1g")));
                List<String> icebergTouch = new ArrayList<>(kbackfillIceberg(touch, "latest", warehouse, "ours", "touch"));
                icebergTouch.addAll(List.of(keyArgs));
                Measured ourIceberg = measure(icebergTouch, Map.of("KBACKFILL_JAVA_OPTS", "-Xmx512m"));
                printWide(n, "Iceberg, kbackfill 1% touched (" + keying + ", -Xmx512m)", ourIceberg);
                checkIceberg(warehouse, "ours", n);
                if (icebergCp != null) {
                    printWide(n, "Iceberg, Spark new table", measure(sparkIceberg(icebergCp, topic, tableOffsets, warehouse,
                            "spark", "create-day"), Map.of()));
                    Measured theirs = measure(sparkIceberg(icebergCp, touch, touchOffsets, warehouse, "spark",
                            "merge-day:" + day + ":" + keyColumns), Map.of());
                    printWide(n, "Iceberg, Spark MERGE 1% touched (told the day)", theirs);
                    System.out.printf(Locale.ROOT, "%-10d %-62s %9.1fx   (Spark: %s)%n", n, "Iceberg, Spark / kbackfill",
                            theirs.seconds() / ourIceberg.seconds(), theirs.out().strip());
                }
                exec(List.of("rm", "-rf", dir.toString()), Map.of());
            }
        }
        System.out.println();
    }

    private List<String> sparkIceberg(String cp, String topic, List<String> offsets, Path warehouse, String table,
                                      String mode) {
        List<String> command = sparkCommand(cp);
        command.set(command.size() - 1, "dev.kbackfill.interop.iceberg.SparkIcebergBench");
        command.addAll(List.of(bootstrap, topic, offsets.get(0), offsets.get(1), warehouse.toString(), table, mode));
        return command;
    }

    /** Counts the rows of {@code db.TABLE} in the warehouse with Iceberg's own reader; must be {@code expected}. */
    private static void checkIceberg(Path warehouse, String table, long expected) throws Exception {
        org.apache.iceberg.Table t = new org.apache.iceberg.hadoop.HadoopCatalog(new org.apache.hadoop.conf.Configuration(),
                warehouse.toString()).loadTable(org.apache.iceberg.catalog.TableIdentifier.of("db", table));
        long rows = 0;
        try (org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> records =
                     org.apache.iceberg.data.IcebergGenerics.read(t).select("kafka_key").build()) {
            for (org.apache.iceberg.data.Record ignored : records) {
                rows++;
            }
        }
        if (rows != expected) {
            throw new IllegalStateException("the Iceberg table db." + table + " holds " + rows + " rows, not " + expected);
        }
    }

    /**
     * The same job on one machine and on the Spark engine (issue 11): the whole topic into a new Delta table with
     * {@code bin/kbackfill run}, then with {@code --engine spark} on local[2] and local[1] (the Spark job's cost
     * growth from one to two executor cores). Every run is checked for one row per key.
     */
    private void scale() throws Exception {
        System.out.println("== Scale: the whole topic into a new Delta table, wall time of the command");
        System.out.printf("%-6s %-44s %10s%n", "round", "run", "seconds");
        // -Dbench.scaleMasters=MASTER;MASTER (default: all four below) runs some of them, e.g. the executors' own JVMs
        List<String> masters = List.of(System.getProperty("bench.scaleMasters",
                "local[2];local[1];local-cluster[1,1,1024];local-cluster[2,1,1024]").split(";"));
        for (int r = 1; r <= rounds; r++) {
            Path dir = Files.createTempDirectory("kbackfill-bench-scale");
            double single = timed(kbackfillDelta(TOPIC, "latest", dir.resolve("single").toString(), "scale-single"));
            checkRows(dir.resolve("single"));
            System.out.printf(Locale.ROOT, "%-6d %-44s %10.2f%n", r, "kbackfill run (one process)", single);
            Map<String, Double> spark = new java.util.HashMap<>();
            // local-cluster: executors as JVMs of their own (RPC, shuffle and task serialization as on a cluster)
            for (String master : masters) {
                Path table = dir.resolve("spark-" + master.replaceAll("\\W", ""));
                List<String> command = new ArrayList<>(kbackfillDelta(TOPIC, "latest", table.toString(), "scale-" + master));
                command.addAll(List.of("--engine", "spark", "--master", master, "--conf", "spark.driver.memory=2g"));
                spark.put(master, timed(command));
                checkRows(table);
                System.out.printf(Locale.ROOT, "%-6d %-44s %10.2f%n", r, "kbackfill run --engine spark, " + master,
                        spark.get(master));
            }
            if (spark.containsKey("local[2]") && spark.containsKey("local[1]")) {
                System.out.printf(Locale.ROOT, "%-6d %-44s %9.2fx / %.2fx%n", r,
                        "Spark local[2] / one process; local[1] / local[2]", spark.get("local[2]") / single,
                        spark.get("local[1]") / spark.get("local[2]"));
            }
            if (spark.containsKey("local-cluster[1,1,1024]") && spark.containsKey("local-cluster[2,1,1024]")) {
                System.out.printf(Locale.ROOT, "%-6d %-44s %9.2fx / %.2fx%n", r, "local-cluster 1 executor / one process; 2 / 1",
                        spark.get("local-cluster[1,1,1024]") / single,
                        spark.get("local-cluster[2,1,1024]") / spark.get("local-cluster[1,1,1024]"));
            }
        }
    }

    /**
     * The Kafka sink's target index beyond the heap: a compacted target topic of many keys (default 20M,
     * -Dbench.indexKeys), then a newer-wins backfill of a small range into it under -Xmx512m, whose index of the
     * target moves to disk. Prints the index's own time (the sink's note), the run's wall time and peak RSS.
     */
    private void targetIndex() throws Exception {
        int indexKeys = Integer.getInteger("bench.indexKeys", 20_000_000);
        String target = "bench-index";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(target, PARTITIONS, (short) 1)
                    .configs(Map.of("cleanup.policy", "compact", "retention.ms", "-1")))).all().get();
            Thread.sleep(2000);
        }
        long started = System.nanoTime();
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.LINGER_MS_CONFIG, 20,
                ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024, ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < indexKeys; i++) {
                p.send(new ProducerRecord<>(target, null, T0.toEpochMilli(), String.format(Locale.ROOT, "key-%09d", i),
                        "{\"live\":" + i + "}"));
            }
            p.flush();
        }
        System.out.printf(Locale.ROOT, "== Kafka sink target index: %d keys in topic %s (loaded in %.0f s)%n", indexKeys,
                target, (System.nanoTime() - started) / 1e9);
        List<String> run = List.of(root.resolve("bin/kbackfill").toString(), "run", "--topic", TOPIC, "--from",
                "earliest", "--to", "offset:1000", "--partitions", "0", "--sink", "kafka:" + target, "--job", "bench-index",
                "--progress", "none", "--bootstrap-server", bootstrap);
        List<String> timed = new ArrayList<>(List.of("/usr/bin/time", "-f", "RSS_KB=%M"));
        timed.addAll(run);
        // stderr too: the sink's note says how long the index took and where it went
        ProcessBuilder pb = new ProcessBuilder(timed).redirectErrorStream(true);
        pb.environment().put("KBACKFILL_JAVA_OPTS", "-Xmx512m");
        long t = System.nanoTime();
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        double seconds = (System.nanoTime() - t) / 1e9;
        if (p.waitFor() != 0) {
            throw new IllegalStateException("the run into " + target + " failed: " + out);
        }
        String note = out.lines().filter(l -> l.startsWith("note: indexed")).findFirst().orElse("(no index note)");
        long rssKb = Long.parseLong(out.lines().filter(l -> l.startsWith("RSS_KB=")).findFirst().orElseThrow()
                .substring(7));
        System.out.println(note);
        System.out.printf(Locale.ROOT, "run (-Xmx512m): %.1f s wall, peak RSS %d MB%n%n", seconds, rssKb / 1024);
    }

    /**
     * Delta cost growth (issue 13): tables of RECORDS, 5x and 10x RECORDS rows (every key once, written by kbackfill),
     * then a backfill touching 1% of their keys at random, by kbackfill (-Xmx512m at every size) and by Spark
     * local[2]'s MERGE into a copy of the same table (same files, same table properties). Wall time and peak RSS
     * of each process; every kbackfill table is counted afterwards.
     */
    private void growth() throws Exception {
        String sparkClasspath = System.getProperty("bench.sparkClasspath");
        // whole rows per partition, so that a prefix of N records is N / PARTITIONS offsets of each
        int unit = records / PARTITIONS * PARTITIONS;
        int[] sizes = {unit, 5 * unit, 10 * unit};
        int largest = sizes[2];
        String base = "growth";
        long started = System.nanoTime();
        loadGrowth(base, sizes, 13);
        System.out.printf(Locale.ROOT, "== Delta cost growth: %d records and 1%% touches loaded in %.0f s%n", largest,
                (System.nanoTime() - started) / 1e9);
        System.out.printf("%-10s %-46s %9s %9s%n", "table", "run", "seconds", "RSS MB");
        for (int n : sizes) {
            Path dir = Files.createTempDirectory("kbackfill-bench-growth");
            String ours = dir.resolve("ours").toString();
            StringBuilder to = new StringBuilder("{\"" + base + "\":{");
            for (int q = 0; q < PARTITIONS; q++) {
                to.append(q == 0 ? "" : ",").append('"').append(q).append("\":").append(n / PARTITIONS);
            }
            to.append("}}");
            Measured create = measure(kbackfillDelta(base, to.toString(), ours, "create"),
                    Map.of("KBACKFILL_JAVA_OPTS", "-Xmx1g"));
            print(n, "kbackfill, new table (every key once)", create);
            exec(List.of("cp", "-r", ours, dir.resolve("spark").toString()), Map.of());
            String touch = base + "-touch-" + n;
            Measured ourTouch = measure(kbackfillDelta(touch, "latest", ours, "touch"), Map.of("KBACKFILL_JAVA_OPTS",
                    "-Xmx512m "
                    + System.getProperty("bench.touchJavaOpts", "").replace("{rows}", String.valueOf(n))));
            print(n, "kbackfill, 1% touched (-Xmx512m)", ourTouch);
            // the same touches again under overwrite (the same work: probe, vectors, new rows) in half the heap
            Measured again = measure(kbackfillDelta(touch, "latest", ours, "touch-again", "--on-conflict", "overwrite"),
                    Map.of("KBACKFILL_JAVA_OPTS", "-Xmx256m"));
            print(n, "kbackfill, the same 1% again (-Xmx256m)", again);
            long rows = dev.kbackfill.sink.delta.DeltaTableRows.count(ours);
            if (rows != n) {
                throw new IllegalStateException(ours + " holds " + rows + " rows, not " + n);
            }
            if (sparkClasspath != null) {
                List<String> merge = sparkCommand(sparkClasspath);
                merge.addAll(List.of(bootstrap, touch));
                merge.addAll(sparkOffsets(touch));
                merge.addAll(List.of(dir.resolve("spark").toString(), "merge"));
                Measured theirs = measure(merge, Map.of());
                print(n, "Spark local[2] MERGE, 1% touched", theirs);
                long vectors;
                try (java.util.stream.Stream<Path> files = Files.list(dir.resolve("spark"))) {
                    vectors = files.filter(f -> f.getFileName().toString().startsWith("deletion_vector_")).count();
                }
                System.out.printf(Locale.ROOT, "%-10d %-46s %9.1fx   (Spark: %s; its deletion-vector files: %d)%n", n,
                        "Spark / kbackfill", theirs.seconds() / ourTouch.seconds(), theirs.out().strip(), vectors);
            }
            exec(List.of("rm", "-rf", dir.toString()), Map.of());
        }
        System.out.println();
    }

    /**
     * Verification (issue 19), each figure beside the backfill it checks, all in {@code -Xmx256m}: the whole topic
     * into PostgreSQL, then {@code kbackfill verify} of the same range against that table; a Delta table of 10x
     * RECORDS rows (every key once), a backfill touching 1% of its keys (in {@code -Xmx512m}: one 100,000-row Delta
     * batch outgrows 256 MB), then the verify of that 1% range. Wall time and peak RSS of every process; every verify
     * must say AGREES.
     */
    private void verification() throws Exception {
        Map<String, String> small = Map.of("KBACKFILL_JAVA_OPTS", "-Xmx256m " + System.getProperty("bench.verifyJavaOpts", ""));
        System.out.println("== verify: a backfill, then kbackfill verify of its range (verify in -Xmx256m), wall time and peak RSS");
        System.out.printf("%-6s %-48s %10s %12s %8s%n", "round", "run", "seconds", "records/s", "RSS MB");
        String url = SharedPostgres.newDatabase("bench_verify");
        boolean postgres = !"delta".equals(System.getProperty("bench.verifyOnly"));
        for (int r = 1; postgres && r <= rounds; r++) {
            reset(url);
            double run = kbackfillPostgres(url, "bench-verify", small, r, "kbackfill run into PostgreSQL");
            Measured v = measure(List.of(root.resolve("bin/kbackfill").toString(), "verify", "--topic", TOPIC, "--from",
                    "earliest", "--to", "latest", "--sink", url, "--table", "bench_orders", "--bootstrap-server",
                    bootstrap), small);
            agrees(v);
            row(r, "kbackfill verify of that range", v.seconds(), v.peakRssKb());
            System.out.printf(Locale.ROOT, "%-6d %-48s %9.2fx%n", r, "verify / backfill (target <= 1)", v.seconds() / run);
        }
        int n = 10 * (records / PARTITIONS * PARTITIONS);
        String base = "verify-table";
        Map<String, String> retained = Map.of("retention.ms", "-1");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            List<NewTopic> topics = new ArrayList<>(List.of(new NewTopic(base, PARTITIONS, (short) 1).configs(retained)));
            for (int r = 1; r <= rounds; r++) {
                topics.add(new NewTopic(base + "-touch-" + r, PARTITIONS, (short) 1).configs(retained));
            }
            admin.createTopics(topics).all().get();
            Thread.sleep(2000);
        }
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.LINGER_MS_CONFIG, 20,
                ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024, ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        java.util.Random random = new java.util.Random(19);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < n; i++) {
                p.send(new ProducerRecord<>(base, i % PARTITIONS, T0.plusSeconds(i).toEpochMilli(), key(i, n), json(i, n)));
            }
            for (int r = 1; r <= rounds; r++) {
                int[] touched = random.ints(0, n).distinct().limit(n / 100).toArray();
                for (int j = 0; j < touched.length; j++) {
                    int update = touched[j] + n * r; // the same key, a later version
                    p.send(new ProducerRecord<>(base + "-touch-" + r, null, T0.plusSeconds((long) n * r + j).toEpochMilli(),
                            key(update, n), json(update, n)));
                }
            }
            p.flush();
        }
        Path dir = Files.createTempDirectory("kbackfill-bench-verify");
        String table = dir.resolve("table").toString();
        Measured create = measure(kbackfillDelta(base, "latest", table, "create"), Map.of("KBACKFILL_JAVA_OPTS", "-Xmx1g"));
        System.out.printf(Locale.ROOT, "%-6s %-48s %10.2f %12.0f %8d%n", "-", "kbackfill, Delta table of " + n + " rows",
                create.seconds(), n / create.seconds(), create.peakRssKb() / 1024);
        for (int r = 1; r <= rounds; r++) {
            String touch = base + "-touch-" + r;
            // the backfill in the heap docs/sinks/delta.md asks for at this size (its 250,000-row batch), its verify in
            // -Xmx256m
            Measured run = measure(kbackfillDelta(touch, "latest", table, "touch-" + r), Map.of("KBACKFILL_JAVA_OPTS",
                    "-Xmx512m"));
            Measured v = measure(List.of(root.resolve("bin/kbackfill").toString(), "verify", "--topic", touch, "--from",
                    "earliest", "--to", "latest", "--sink", "delta:" + table, "--bootstrap-server", bootstrap), small);
            agrees(v);
            System.out.printf(Locale.ROOT, "%-6d %-48s %10.2f %12.0f %8d%n", r, "kbackfill, 1% of the table (-Xmx512m)",
                    run.seconds(), n / 100 / run.seconds(), run.peakRssKb() / 1024);
            System.out.printf(Locale.ROOT, "%-6d %-48s %10.2f %12.0f %8d%n", r, "kbackfill verify of that 1%",
                    v.seconds(), n / 100 / v.seconds(), v.peakRssKb() / 1024);
            System.out.printf(Locale.ROOT, "%-6d %-48s %9.2fx%n", r, "verify / backfill (target < 2)",
                    v.seconds() / run.seconds());
            String extra = System.getProperty("bench.verifyExtraOpts");
            if (extra != null) {
                // the same verify with other settings (a memory budget, say), beside the default
                Measured w = measure(List.of(root.resolve("bin/kbackfill").toString(), "verify", "--topic", touch,
                        "--from", "earliest", "--to", "latest", "--sink", "delta:" + table, "--bootstrap-server",
                        bootstrap), Map.of("KBACKFILL_JAVA_OPTS", "-Xmx256m " + extra));
                agrees(w);
                System.out.printf(Locale.ROOT, "%-6d %-48s %10.2f %12.0f %8d%n", r, "verify, " + extra, w.seconds(),
                        n / 100 / w.seconds(), w.peakRssKb() / 1024);
            }
        }
        exec(List.of("rm", "-rf", dir.toString()), Map.of());
        System.out.println();
    }

    private static void agrees(Measured verify) {
        if (!verify.out().startsWith("AGREES")) {
            throw new IllegalStateException("verify did not agree: " + verify.out());
        }
    }

    /** The whole topic's startingOffsets and endingOffsets JSON, from {@code kbackfill plan --format spark}. */
    private List<String> sparkOffsets(String topic) throws Exception {
        String offsets = exec(List.of(root.resolve("bin/kbackfill").toString(), "plan", "--topic", topic, "--from",
                "earliest", "--to", "latest", "--format", "spark", "--bootstrap-server", bootstrap), Map.of()).strip();
        return List.of(offsets.substring(offsets.indexOf("\"startingOffsets\":") + 18, offsets.indexOf(",\"endingOffsets\"")),
                offsets.substring(offsets.indexOf("\"endingOffsets\":") + 16, offsets.length() - 1));
    }

    /** The JVM running the Spark peer (SparkDeltaBench), without its arguments. */
    private static List<String> sparkCommand(String sparkClasspath) {
        List<String> spark = new ArrayList<>(List.of("java", "-Xmx2g"));
        spark.addAll(List.of("--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
                "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
                "--add-opens=java.base/java.net=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
                "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED", "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
                "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED", "-cp", sparkClasspath,
                "dev.kbackfill.interop.SparkDeltaBench"));
        return spark;
    }

    private static void printWide(int rows, String run, Measured m) {
        System.out.printf(Locale.ROOT, "%-10d %-62s %9.2f %9d%n", rows, run, m.seconds(), m.peakRssKb() / 1024);
    }

    private static void print(int rows, String run, Measured m) {
        System.out.printf(Locale.ROOT, "%-10d %-46s %9.2f %9d%n", rows, run, m.seconds(), m.peakRssKb() / 1024);
    }

    /** Wall seconds and peak resident memory (KB, from GNU time) of one process. */
    record Measured(double seconds, long peakRssKb, String out) {
    }

    private static Measured measure(List<String> command, Map<String, String> env) throws Exception {
        Path rss = Files.createTempFile("kbackfill-bench", ".rss");
        List<String> timed = new ArrayList<>(List.of("/usr/bin/time", "-f", "%M", "-o", rss.toString()));
        timed.addAll(command);
        long t = System.nanoTime();
        String out = exec(timed, env);
        double seconds = (System.nanoTime() - t) / 1e9;
        long kb = Long.parseLong(Files.readString(rss).strip().lines().reduce((a, b) -> b).orElseThrow());
        Files.delete(rss);
        return new Measured(seconds, kb, out);
    }

    /**
     * {@code plan} over a topic of many partitions (default 1,000, -Dbench.planPartitions) with a time bound,
     * against Kafka's GetOffsetShell answering one time lookup over the same partitions: both started as
     * processes, as a user starts them.
     */
    private void planning() throws Exception {
        int partitions = Integer.getInteger("bench.planPartitions", 1000);
        int perPartition = Integer.getInteger("bench.planRecordsPerPartition", 200);
        String topic = "bench-plan";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)
                    .configs(Map.of("retention.ms", "-1")))).all().get();
            Thread.sleep(3000);
        }
        int total = partitions * perPartition;
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.LINGER_MS_CONFIG, 20);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < total; i++) {
                p.send(new ProducerRecord<>(topic, i % partitions, T0.plusSeconds(i).toEpochMilli(), key(i, keys),
                        json(i, keys)));
            }
            p.flush();
        }
        Instant middle = T0.plusSeconds(total / 2);
        System.out.printf("== plan: %d partitions, %d records, --from %s --to latest; wall time and peak RSS%n",
                partitions, total, middle);
        List<String> ours = List.of(root.resolve("bin/kbackfill").toString(), "plan", "--topic", topic, "--from",
                middle.toString(), "--to", "latest", "--bootstrap-server", bootstrap);
        List<String> shell = List.of("java", "-Xlog:disable", "-cp", classpath, "org.apache.kafka.tools.GetOffsetShell",
                "--bootstrap-server", bootstrap, "--topic", topic, "--time", Long.toString(middle.toEpochMilli()));
        measure(ours, Map.of()); // untimed: the broker's first answers for these partitions
        measure(shell, Map.of());
        System.out.printf("%-6s %-44s %10s %12s%n", "round", "command", "seconds", "peak RSS MB");
        for (int r = 1; r <= rounds; r++) {
            Measured k = measure(ours, Map.of());
            if (!k.out().contains("total")) {
                throw new IllegalStateException("kbackfill plan printed no plan: " + k.out());
            }
            Measured g = measure(shell, Map.of());
            if (g.out().lines().count() != partitions) {
                throw new IllegalStateException("GetOffsetShell answered " + g.out().lines().count() + " lines");
            }
            System.out.printf(Locale.ROOT, "%-6d %-44s %10.2f %12d%n", r, "kbackfill plan (time bound, checked)",
                    k.seconds(), k.peakRssKb() / 1024);
            System.out.printf(Locale.ROOT, "%-6d %-44s %10.2f %12d%n", r, "GetOffsetShell --time (one lookup)",
                    g.seconds(), g.peakRssKb() / 1024);
            System.out.printf(Locale.ROOT, "%-6d %-44s %9.2fx%n", r, "kbackfill / GetOffsetShell", k.seconds() / g.seconds());
        }
        System.out.println();
        logTimes(topic, partitions, perPartition);
    }

    /**
     * What a run start pays to look up each partition's log time below its start (LogTimes), here from the middle of
     * every partition of the plan topic: once where timestamps never go backwards (this topic), once on a copy whose
     * timestamps jump back by up to an hour in three records of ten. In this JVM, warmed by one untimed lookup.
     */
    private void logTimes(String monotone, int partitions, int perPartition) throws Exception {
        String jittered = monotone + "-jitter";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(jittered, partitions, (short) 1)
                    .configs(Map.of("retention.ms", "-1")))).all().get();
            Thread.sleep(3000);
        }
        java.util.Random random = new java.util.Random(7);
        int total = partitions * perPartition;
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap, ProducerConfig.LINGER_MS_CONFIG, 20);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < total; i++) {
                long back = random.nextInt(10) < 3 ? random.nextInt(3_600_000) : 0;
                p.send(new ProducerRecord<>(jittered, i % partitions, T0.plusSeconds(i).toEpochMilli() - back,
                        key(i, keys), json(i, keys)));
            }
            p.flush();
        }
        Map<Integer, Long> starts = new java.util.HashMap<>();
        for (int q = 0; q < partitions; q++) {
            starts.put(q, (long) perPartition / 2);
        }
        System.out.printf("== log time below each start: %d partitions, from offset %d of each; in this JVM%n",
                partitions, perPartition / 2);
        System.out.printf("%-6s %-44s %10s %10s%n", "round", "topic", "seconds", "bounded");
        try (dev.kbackfill.resolver.KafkaOffsetSource source = dev.kbackfill.resolver.KafkaOffsetSource.create(
                Map.of("bootstrap.servers", bootstrap))) {
            for (String topic : List.of(monotone, jittered)) {
                dev.kbackfill.resolver.LogTimes.lookUp(source, topic, starts,
                        org.apache.kafka.common.IsolationLevel.READ_COMMITTED); // untimed
            }
            for (int r = 1; r <= rounds; r++) {
                for (String topic : List.of(monotone, jittered)) {
                    long t = System.nanoTime();
                    dev.kbackfill.resolver.LogTimes.Result result = dev.kbackfill.resolver.LogTimes.lookUp(source,
                            topic, starts, org.apache.kafka.common.IsolationLevel.READ_COMMITTED);
                    System.out.printf(Locale.ROOT, "%-6d %-44s %10.2f %10d%n", r, topic.equals(monotone)
                            ? "timestamps never go backwards" : "3 in 10 timestamps up to 1 h back",
                            (System.nanoTime() - t) / 1e9, result.bounded().size());
                    if (result.times().size() != partitions) {
                        throw new IllegalStateException("log times for " + result.times().size() + " partitions");
                    }
                }
            }
        }
        System.out.println();
    }

    private void checkRows(Path table) throws Exception {
        long rows = dev.kbackfill.sink.delta.DeltaTableRows.rows(table.toString()).size();
        if (rows != keys) {
            throw new IllegalStateException(table + " holds " + rows + " rows, not " + keys);
        }
    }

    /** {@code kbackfill run} of a topic from its start to {@code to} into a Delta table (created if absent). */
    private List<String> kbackfillDelta(String topic, String to, String table, String job, String... more) {
        List<String> command = new ArrayList<>(List.of(root.resolve("bin/kbackfill").toString(), "run", "--topic", topic,
                "--from", "earliest", "--to", to, "--sink", "delta:" + table, "--create-table", "--job", job,
                "--progress", "none", "--bootstrap-server", bootstrap));
        command.addAll(List.of(more));
        return command;
    }

    private double timed(List<String> command) throws Exception {
        long t = System.nanoTime();
        exec(command, Map.of("KBACKFILL_JAVA_OPTS", "-Xmx1g"));
        return (System.nanoTime() - t) / 1e9;
    }

    private static String exec(List<String> command, Map<String, String> env) throws Exception {
        Path err = Files.createTempFile("kbackfill-bench", ".err");
        ProcessBuilder pb = new ProcessBuilder(command).redirectError(err.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int code = p.waitFor();
        List<String> errLines = Files.readAllLines(err);
        Files.delete(err);
        if (code != 0) {
            throw new IllegalStateException(String.join(" ", command.subList(0, Math.min(3, command.size())))
                    + " failed (exit " + code + "): " + out + String.join("\n",
                    errLines.subList(Math.max(0, errLines.size() - 20), errLines.size())));
        }
        return out;
    }

    /** The references' upsert into bench_orders: every column, under kbackfill's newer-wins guard. */
    private static final String UPSERT = "ON CONFLICT (kafka_key) DO UPDATE SET "
            + "order_id = EXCLUDED.order_id, customer = EXCLUDED.customer, status = EXCLUDED.status, "
            + "amount = EXCLUDED.amount, currency = EXCLUDED.currency, items = EXCLUDED.items, "
            + "channel = EXCLUDED.channel, updated_at = EXCLUDED.updated_at, note = EXCLUDED.note, "
            + "kafka_partition = EXCLUDED.kafka_partition, kafka_offset = EXCLUDED.kafka_offset, "
            + "kafka_timestamp = EXCLUDED.kafka_timestamp WHERE bench_orders.kafka_offset IS NULL OR "
            + "(bench_orders.kafka_partition = EXCLUDED.kafka_partition AND bench_orders.kafka_offset <= "
            + "EXCLUDED.kafka_offset) OR (bench_orders.kafka_partition <> EXCLUDED.kafka_partition AND "
            + "bench_orders.kafka_timestamp <= EXCLUDED.kafka_timestamp)";

    private static void reset(String url) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS bench_orders");
            s.execute("DROP TABLE IF EXISTS kbackfill_jobs");
            s.execute("DROP TABLE IF EXISTS kbackfill_progress");
            s.execute("CREATE TABLE bench_orders (kafka_key text PRIMARY KEY, order_id text, customer text, status text, "
                    + "amount numeric, currency text, items bigint, channel text, updated_at text, note text, "
                    + "kafka_partition bigint, kafka_offset bigint, kafka_timestamp timestamptz)");
        }
    }

    /**
     * The database's own ceiling for the same rows: COPY 50k-row chunks into a temporary table and upsert them with
     * one INSERT .. SELECT .. ON CONFLICT each, guard included. The CSV is built before the clock starts.
     */
    /**
     * The best hand-built pipeline on the same cores (issue 13's PostgreSQL reference): kcat reads the topic while
     * psql copies its output into an unlogged staging table, then one {@code INSERT .. SELECT DISTINCT ON (key)}
     * takes each key's last record, its fields out of the JSON, into the same table with the same newer-wins guard.
     * No exactly-once, no resume. Timed from kcat's start to the INSERT's commit; the rows are checked.
     */
    private double kcatPsqlPipeline(String url) throws Exception {
        return kcatPsqlPipeline(url, TOPIC, keys);
    }

    /** kcat's records of {@code topic} copied by psql into a staging table, then one upsert into bench_orders. */
    private double kcatPsqlPipeline(String url, String topic, long expectedRows) throws Exception {
        String insert = "INSERT INTO bench_orders SELECT DISTINCT ON (k) k, j->>'order_id', j->>'customer', "
                + "j->>'status', (j->>'amount')::numeric, j->>'currency', (j->>'items')::bigint, j->>'channel', "
                + "j->>'updated_at', j->>'note', p, o, to_timestamp(ts / 1000.0) FROM (SELECT k, p, o, ts, v::json AS j "
                + "FROM staging) s ORDER BY k, p, o DESC " + UPSERT;
        return kcatPsqlPipeline(url, topic, insert, "bench_orders", expectedRows);
    }

    /**
     * kcat's records of {@code topic} (key, partition, offset, time, value) copied by psql into an unlogged staging
     * table, then {@code insert} from it into {@code table}; checks the table's row count. Its seconds.
     */
    private double kcatPsqlPipeline(String url, String topic, String insert, String table, long expectedRows)
            throws Exception {
        String psqlUrl = "postgresql://postgres@" + url.substring("jdbc:postgresql://".length(), url.indexOf('?'));
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS staging");
            s.execute("CREATE UNLOGGED TABLE staging (k text, p int, o bigint, ts bigint, v text)");
        }
        String pipeline = "set -o pipefail; kcat -C -b " + bootstrap + " -t " + topic + " -o beginning -e -q "
                + "-f '%k\\t%p\\t%o\\t%T\\t%s\\n' | psql -q -v ON_ERROR_STOP=1 '" + psqlUrl + "' "
                + "-c '\\copy staging FROM pstdin' -c \"" + insert.replace("\"", "\\\"") + "\"";
        long started = System.nanoTime();
        exec(List.of("bash", "-c", pipeline), Map.of());
        double seconds = (System.nanoTime() - started) / 1e9;
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            if (rs.getLong(1) != expectedRows) {
                throw new IllegalStateException("the kcat | psql pipeline left " + rs.getLong(1) + " rows in " + table
                        + ", not " + expectedRows);
            }
        }
        return seconds;
    }

    private double copyCeiling(String url) throws Exception {
        int chunk = 50_000;
        List<String> chunks = new ArrayList<>();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < records; i++) {
            int key = i % keys;
            sb.append(key(i, keys)).append(',').append(String.format(Locale.ROOT, "order-%07d", key)).append(',')
                    .append(String.format(Locale.ROOT, "customer-%05d", key % 20000)).append(",status-").append(i / keys)
                    .append(',').append(10 + key % 900).append('.').append(String.format(Locale.ROOT, "%02d", key % 100))
                    .append(",EUR,").append(1 + key % 9).append(",web,").append(T0.plusSeconds(i))
                    .append(",benchmark record padding to about two hundred bytes,").append(partitionOf[i]).append(',')
                    .append(offsetOf[i]).append(',').append(T0.plusSeconds(i)).append('\n');
            if ((i + 1) % chunk == 0 || i == records - 1) {
                chunks.add(sb.toString());
                sb.setLength(0);
            }
        }
        long started = System.nanoTime();
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TEMP TABLE staging (LIKE bench_orders) ON COMMIT DELETE ROWS");
                c.commit();
                for (String csv : chunks) {
                    copy.copyIn("COPY staging FROM STDIN WITH (FORMAT csv)", new StringReader(csv));
                    s.execute("INSERT INTO bench_orders SELECT DISTINCT ON (kafka_key) * FROM staging "
                            + "ORDER BY kafka_key, kafka_offset DESC " + UPSERT);
                    c.commit();
                }
            }
        }
        return (System.nanoTime() - started) / 1e9;
    }
}
