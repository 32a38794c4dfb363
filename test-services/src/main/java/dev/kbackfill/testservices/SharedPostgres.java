package dev.kbackfill.testservices;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * One real PostgreSQL 17 server per JVM (binaries from a Maven jar, no Docker), started on first use and stopped at
 * exit. Each caller gets a database of its own with {@link #newDatabase(String)}.
 */
public final class SharedPostgres {

    private static EmbeddedPostgres instance;

    private SharedPostgres() {
    }

    public static synchronized EmbeddedPostgres get() {
        if (instance == null) {
            try {
                EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        pg.close();
                    } catch (IOException e) {
                        // exiting anyway
                    }
                }, "shared-postgres-shutdown"));
                instance = pg;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start the embedded PostgreSQL", e);
            }
        }
        return instance;
    }

    /** Creates a database and returns its JDBC URL (user postgres, no password). */
    public static String newDatabase(String name) {
        EmbeddedPostgres pg = get();
        try (Connection c = pg.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + name);
            s.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name, e);
        }
        return "jdbc:postgresql://127.0.0.1:" + pg.getPort() + "/" + name + "?user=postgres";
    }
}
