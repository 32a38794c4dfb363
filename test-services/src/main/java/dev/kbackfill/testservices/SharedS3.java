package dev.kbackfill.testservices;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A real S3 API server shared by the tests of a JVM: S3Proxy with its filesystem backend, as a process on 127.0.0.1
 * and a free port, started on first use and stopped at exit. It checks AWS signatures (v2 and v4) against one access
 * key and secret. {@link #standard()} honours conditional writes ({@code If-None-Match}, {@code If-Match}) as S3
 * does; {@link #unconditional()} (S3Proxy 2.6) accepts them as plain writes, as S3-compatible stores did before 2024.
 */
public final class SharedS3 {

    private static final SharedS3 STANDARD = new SharedS3("s3proxy.jar");
    private static final SharedS3 UNCONDITIONAL = new SharedS3("s3proxy.unconditional.jar");

    /** The server that honours conditional writes, as S3 does. */
    public static SharedS3 standard() {
        return STANDARD;
    }

    /** A server that ignores the conditions of conditional writes. */
    public static SharedS3 unconditional() {
        return UNCONDITIONAL;
    }

    /** The access key id the server accepts. */
    public static final String ACCESS_KEY = "kbackfill-test";
    /** The secret the server accepts. */
    public static final String SECRET_KEY = "kbackfill-test-secret";

    private final String jarProperty;
    private String endpoint;
    private Path data;

    private SharedS3(String jarProperty) {
        this.jarProperty = jarProperty;
    }

    /** The endpoint, {@code http://127.0.0.1:PORT}, starting the server on the first call. */
    public synchronized String endpoint() {
        if (endpoint == null) {
            start();
        }
        return endpoint;
    }

    /** A new empty bucket; its name is unique in this JVM. */
    public String newBucket() {
        endpoint();
        String bucket = "b" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
        try {
            Files.createDirectories(data.resolve(bucket)); // the filesystem backend's bucket is a folder
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bucket;
    }

    /**
     * Uploads the files under {@code dir} into {@code bucket} under {@code prefix} through the S3 API (a PUT per file,
     * signed with AWS signature version 2), as objects named by their relative paths: for files another program wrote
     * locally, such as a Spark checkpoint.
     */
    public void putTree(String bucket, String prefix, Path dir) {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                String key = prefix + "/" + dir.relativize(f).toString().replace(java.io.File.separatorChar, '/');
                String resource = "/" + bucket + "/" + key;
                String date = java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
                        java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC));
                String type = "application/octet-stream";
                javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA1");
                mac.init(new javax.crypto.spec.SecretKeySpec(SECRET_KEY.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        "HmacSHA1"));
                String signature = java.util.Base64.getEncoder().encodeToString(mac.doFinal(
                        ("PUT\n\n" + type + "\n" + date + "\n" + resource).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                java.net.http.HttpResponse<String> r = http.send(java.net.http.HttpRequest.newBuilder(
                                java.net.URI.create(endpoint() + resource))
                        .header("Date", date).header("Content-Type", type)
                        .header("Authorization", "AWS " + ACCESS_KEY + ":" + signature)
                        .PUT(java.net.http.HttpRequest.BodyPublishers.ofFile(f)).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    throw new IllegalStateException("PUT " + resource + ": " + r.statusCode() + " " + r.body());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The Hadoop S3A settings that reach this server, credentials included: what a user puts in a
     * {@code --sink-command-config} file.
     */
    public Map<String, String> s3aSettings() {
        Map<String, String> s = new LinkedHashMap<>(s3aEndpointSettings());
        s.put("fs.s3a.access.key", ACCESS_KEY);
        s.put("fs.s3a.secret.key", SECRET_KEY);
        return s;
    }

    /** The S3A settings that name this server, without credentials: what {@code --sink-property} may carry. */
    public Map<String, String> s3aEndpointSettings() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("fs.s3a.endpoint", endpoint());
        s.put("fs.s3a.endpoint.region", "us-east-1");
        s.put("fs.s3a.path.style.access", "true");
        s.put("fs.s3a.connection.ssl.enabled", "false");
        return s;
    }

    private void start() {
        try {
            Path jar = jar();
            int port;
            try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            data = Files.createTempDirectory("kbackfill-s3");
            Path conf = data.resolveSibling(data.getFileName() + ".properties");
            Files.writeString(conf, String.join("\n", List.of(
                    "s3proxy.endpoint=http://127.0.0.1:" + port,
                    "s3proxy.authorization=aws-v2-or-v4",
                    "s3proxy.identity=" + ACCESS_KEY,
                    "s3proxy.credential=" + SECRET_KEY,
                    "jclouds.provider=filesystem",
                    "jclouds.identity=" + ACCESS_KEY,
                    "jclouds.credential=" + SECRET_KEY,
                    "jclouds.filesystem.basedir=" + data)) + "\n");
            Path log = Files.createTempFile("kbackfill-s3", ".log");
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process process = new ProcessBuilder(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                    "-Xmx256m", "-jar", jar.toString(), "--properties", conf.toString()))
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            ServiceProcesses.stopAtExit(process, "shared-s3", 10, () -> { });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
                    break;
                } catch (IOException notYet) {
                    if (!process.isAlive() || System.nanoTime() > deadline) {
                        throw new IllegalStateException("the S3 server did not start; its log: " + Files.readString(log));
                    }
                    Thread.sleep(100);
                }
            }
            endpoint = "http://127.0.0.1:" + port;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the S3 server", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the S3 server", e);
        }
    }

    private Path jar() throws IOException {
        Properties p = new Properties();
        try (InputStream in = SharedS3.class.getResourceAsStream("s3proxy.properties")) {
            if (in == null) {
                throw new IllegalStateException("s3proxy.properties is missing from test-services");
            }
            p.load(in);
        }
        Path jar = Path.of(p.getProperty(jarProperty));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("S3Proxy is not at " + jar + ": run 'mvn install' on test-services");
        }
        return jar;
    }
}
