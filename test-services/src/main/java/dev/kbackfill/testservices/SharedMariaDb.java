package dev.kbackfill.testservices;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One real MariaDB server per JVM: Debian's {@code mariadbd} (installed by {@code .ci/run}: {@code apt-get install
 * mariadb-server}) on a fresh data directory, 127.0.0.1 and a free port, started on first use and stopped at exit.
 */
public final class SharedMariaDb {

    private static final List<String> SERVERS = List.of("/usr/sbin/mariadbd", "/usr/sbin/mysqld", "/usr/bin/mariadbd");
    private static Integer port;

    private SharedMariaDb() {
    }

    /** The server's port, starting it on the first call. */
    public static synchronized int port() {
        if (port == null) {
            port = start();
        }
        return port;
    }

    /** Creates a database and returns its JDBC URL (user root, no password). */
    public static String newDatabase(String name) {
        int p = port();
        try (Connection c = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + p + "/?user=root");
             Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + name);
            s.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name, e);
        }
        return "jdbc:mariadb://127.0.0.1:" + p + "/" + name + "?user=root";
    }

    private static int start() {
        String server = SERVERS.stream().filter(s -> Files.isExecutable(Path.of(s))).findFirst()
                .orElseThrow(() -> new IllegalStateException("no MariaDB server at " + SERVERS
                        + ": install it with 'apt-get install -y --no-install-recommends mariadb-server' (.ci/run does)"));
        try {
            Path dir = Files.createTempDirectory("kbackfill-mariadb-");
            Path data = dir.resolve("data");
            int p = freePort();
            run(dir, List.of("mariadb-install-db", "--no-defaults", "--datadir=" + data, "--user=root",
                    "--auth-root-authentication-method=normal", "--skip-test-db"));
            Process process = new ProcessBuilder(server, "--no-defaults", "--datadir=" + data, "--user=root",
                    "--bind-address=127.0.0.1", "--port=" + p, "--socket=" + dir.resolve("mysqld.sock"),
                    "--pid-file=" + dir.resolve("mysqld.pid"), "--skip-name-resolve", "--innodb-buffer-pool-size=64M",
                    "--innodb-log-file-size=48M", "--max-connections=100")
                    .redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile()).start();
            ServiceProcesses.stopAtExit(process, "shared-mariadb", 20, () -> deleteRecursively(dir));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!accepts(p)) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("MariaDB did not start; its log: "
                            + Files.readString(dir.resolve("server.log")));
                }
                Thread.sleep(100);
            }
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start MariaDB", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting MariaDB", e);
        }
    }

    private static void run(Path dir, List<String> command) throws IOException, InterruptedException {
        Path log = dir.resolve("install.log");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + Files.readString(log));
        }
    }

    private static boolean accepts(int port) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort at exit
        }
    }
}
