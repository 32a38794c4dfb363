package dev.kbackfill.embedded;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * A single-node KRaft Kafka broker (combined broker and controller) running inside this JVM.
 *
 * <p>It backs the integration tests (share one per test JVM through {@link SharedKafka}) and {@code kbackfill
 * demo}. It listens on 127.0.0.1 only, on free ports, with every internal topic at replication factor 1 and a
 * small log-cleaner buffer so that it runs in a small heap. Time-based retention is off by default, so records
 * with old timestamps stay until a test deletes them on purpose.
 *
 * <pre>{@code
 * try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
 *     kafka.createTopic("orders", 3, Map.of());
 *     // clients use kafka.bootstrapServers()
 * }
 * }</pre>
 */
public final class EmbeddedKafka implements AutoCloseable {

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(90);

    private final Path dataDir;
    private final boolean deleteOnClose;
    private final String bootstrapServers;
    private final String clusterId;
    private final KafkaRaftServer server;

    private EmbeddedKafka(Path dataDir, boolean deleteOnClose, String bootstrapServers, String clusterId,
                          KafkaRaftServer server) {
        this.dataDir = dataDir;
        this.deleteOnClose = deleteOnClose;
        this.bootstrapServers = bootstrapServers;
        this.clusterId = clusterId;
        this.server = server;
    }

    /** Starts a broker in a fresh temporary directory that is deleted on {@link #close()}. */
    public static EmbeddedKafka start() {
        return start(Map.of());
    }

    /** Starts a broker in a fresh temporary directory, with broker settings overriding the defaults. */
    public static EmbeddedKafka start(Map<String, String> brokerOverrides) {
        try {
            return start(Files.createTempDirectory("kbackfill-kafka-"), true, brokerOverrides);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory for the embedded broker", e);
        }
    }

    /**
     * Formats {@code dataDir} as a new single-node cluster and starts the broker on it.
     *
     * @param deleteOnClose whether {@link #close()} deletes {@code dataDir}
     */
    public static EmbeddedKafka start(Path dataDir, boolean deleteOnClose, Map<String, String> brokerOverrides) {
        int brokerPort = freePort();
        int controllerPort = freePort();
        String clusterId = Uuid.randomUuid().toString();
        Path logDir = dataDir.resolve("log");
        Map<String, String> config = defaults(logDir, brokerPort, controllerPort);
        config.putAll(brokerOverrides);
        Path configFile = dataDir.resolve("server.properties");
        writeProperties(configFile, config);
        format(clusterId, configFile);

        Properties props = new Properties();
        props.putAll(config);
        return launch(dataDir, deleteOnClose, props, "127.0.0.1:" + brokerPort, clusterId);
    }

    /** Starts the server of {@code props} on a formatted {@code dataDir} and waits until it answers. */
    private static EmbeddedKafka launch(Path dataDir, boolean deleteOnClose, Properties props, String bootstrap,
                                        String clusterId) {
        KafkaRaftServer server = new KafkaRaftServer(new KafkaConfig(props, false), Time.SYSTEM);
        server.startup();
        EmbeddedKafka kafka = new EmbeddedKafka(dataDir, deleteOnClose, bootstrap, clusterId, server);
        try {
            kafka.awaitReady();
        } catch (RuntimeException e) {
            kafka.close();
            throw e;
        }
        return kafka;
    }

    /**
     * Starts the broker again on a data directory an earlier {@link #start(Path, boolean, Map)} formatted (after a
     * crash or a kill), with the same ports and cluster: clients reconnect to the same address.
     */
    public static EmbeddedKafka restart(Path dataDir) {
        Properties props = new Properties();
        try (java.io.Reader r = Files.newBufferedReader(dataDir.resolve("server.properties"))) {
            props.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the broker settings in " + dataDir, e);
        }
        return launch(dataDir, false, props, props.getProperty("advertised.listeners").replace("PLAINTEXT://", ""),
                "unknown");
    }

    private static Map<String, String> defaults(Path logDir, int brokerPort, int controllerPort) {
        Map<String, String> c = new HashMap<>();
        c.put("process.roles", "broker,controller");
        c.put("node.id", "1");
        c.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        c.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        c.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
        c.put("controller.listener.names", "CONTROLLER");
        c.put("inter.broker.listener.name", "PLAINTEXT");
        c.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        c.put("log.dirs", logDir.toString());
        c.put("num.partitions", "1");
        c.put("auto.create.topics.enable", "false");
        c.put("offsets.topic.replication.factor", "1");
        c.put("offsets.topic.num.partitions", "1");
        // Without these, initTransactions() waits 60 s for a transaction log that can never be created.
        c.put("transaction.state.log.replication.factor", "1");
        c.put("transaction.state.log.min.isr", "1");
        c.put("transaction.state.log.num.partitions", "1");
        c.put("share.coordinator.state.topic.replication.factor", "1");
        c.put("share.coordinator.state.topic.min.isr", "1");
        c.put("group.initial.rebalance.delay.ms", "0");
        // The cleaner's default dedupe buffer takes 128 MB of heap; 2 MB is plenty for test topics.
        c.put("log.cleaner.dedupe.buffer.size", "2097152");
        c.put("log.cleaner.backoff.ms", "500");
        // Test and demo data carry old timestamps: keep them until a test deletes them on purpose.
        c.put("log.retention.ms", "-1");
        return c;
    }

    private static void format(String clusterId, Path configFile) {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        int rc;
        try (PrintStream out = new PrintStream(captured, true, StandardCharsets.UTF_8)) {
            // A cluster id may start with '-': pass it as one --cluster-id=ID argument.
            rc = StorageTool.execute(new String[] {"format", "--cluster-id=" + clusterId, "-c", configFile.toString()},
                    out);
        }
        if (rc != 0) {
            throw new IllegalStateException("formatting the embedded broker's storage failed (exit " + rc + "): "
                    + captured.toString(StandardCharsets.UTF_8).trim());
        }
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        try (Admin admin = admin()) {
            while (true) {
                try {
                    if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
                        return;
                    }
                } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                    // not ready yet
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for the embedded broker", e);
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the embedded broker at " + bootstrapServers
                            + " did not become ready within " + STARTUP_TIMEOUT.toSeconds() + " s");
                }
                sleep(100);
            }
        }
    }

    /** {@code host:port} of the PLAINTEXT listener, for {@code bootstrap.servers}. */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    public String clusterId() {
        return clusterId;
    }

    /** The minimal client configuration: just {@code bootstrap.servers}. */
    public Map<String, Object> clientConfig() {
        Map<String, Object> c = new HashMap<>();
        c.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        return c;
    }

    /** A new admin client for this broker; the caller closes it. */
    public Admin admin() {
        return Admin.create(clientConfig());
    }

    /**
     * Creates a topic and waits until every partition answers {@code ListOffsets}.
     *
     * <p>Producing right after {@code createTopics} can wedge the idempotent producer (KAFKA-15591, still in
     * 4.4.0); once every partition answers {@code listOffsets} its leader is known and producing is safe.
     */
    public void createTopic(String name, int partitions, Map<String, String> topicConfig) {
        createTopic(clientConfig(), name, partitions, topicConfig);
    }

    /**
     * The same on the broker {@code clientConfig} names: one of these in another process
     * ({@link EmbeddedKafkaProcess}).
     */
    public static void createTopic(Map<String, Object> clientConfig, String name, int partitions,
                                   Map<String, String> topicConfig) {
        try (Admin admin = Admin.create(clientConfig)) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(topicConfig)))
                    .all().get(60, TimeUnit.SECONDS);
            awaitPartitionsReady(admin, name, partitions);
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot create topic " + name + ": " + e.getCause().getMessage(),
                    e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topic " + name, e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("creating topic " + name + " timed out", e);
        }
    }

    /** Deletes a topic and waits until the broker no longer lists it. */
    public void deleteTopic(String name) {
        try (Admin admin = admin()) {
            admin.deleteTopics(List.of(name)).all().get(60, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (admin.listTopics().names().get(10, TimeUnit.SECONDS).contains(name)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("topic " + name + " still listed 60 s after deletion");
                }
                sleep(100);
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot delete topic " + name + ": " + e.getCause().getMessage(),
                    e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while deleting topic " + name, e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("deleting topic " + name + " timed out", e);
        }
    }

    private static void awaitPartitionsReady(Admin admin, String topic, int partitions)
            throws InterruptedException {
        Map<TopicPartition, OffsetSpec> request = IntStream.range(0, partitions).boxed()
                .collect(Collectors.toMap(p -> new TopicPartition(topic, p), p -> OffsetSpec.latest()));
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                admin.listOffsets(request).all().get(5, TimeUnit.SECONDS);
                return;
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("partitions of " + topic + " did not get a leader within 60 s", e);
                }
                sleep(100);
            }
        }
    }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
        if (deleteOnClose) {
            deleteRecursively(dataDir);
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free port on 127.0.0.1", e);
        }
    }

    private static void writeProperties(Path file, Map<String, String> config) {
        Properties props = new Properties();
        props.putAll(config);
        try {
            Files.createDirectories(file.getParent());
            try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
                props.store(w, "kbackfill embedded broker");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: a leftover temporary directory is not worth failing a shutdown for
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
