package dev.kbackfill.sink.jdbc;

import java.nio.file.Path;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

@Tag("sqlite")
class SqliteSinkIT extends JdbcSinkContract {

    @TempDir
    static Path dir;

    @Override
    String url() {
        return "jdbc:sqlite:" + dir.resolve("sink.db");
    }

    @Override
    String timestampType() {
        return "TEXT";
    }

    @Override
    Dialect dialect() {
        return new SqliteDialect();
    }

    @Override
    boolean narrowColumns() {
        return false;
    }

    @Override
    boolean concurrentWriters() {
        return false; // one writer at a time: a second transaction cannot interleave with a batch
    }

    @Override
    String foldingKeyType() {
        return "TEXT COLLATE NOCASE";
    }
}
