package dev.kbackfill.sink.jdbc;

import java.nio.file.Path;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

/** The standard MERGE dialect, on H2: the whole contract, the job lock included (an uncommitted lock row). */
@Tag("h2")
class H2SinkIT extends JdbcSinkContract {

    @TempDir
    static Path dir;

    @Override
    String url() {
        return "jdbc:h2:file:" + dir.resolve("sink") + ";DATABASE_TO_UPPER=FALSE";
    }

    @Override
    String timestampType() {
        return "TIMESTAMP WITH TIME ZONE";
    }

    @Override
    String textType() {
        return "CLOB";
    }

    @Override
    Dialect dialect() {
        return new MergeDialect(c -> "VARCHAR");
    }

    @Override
    String foldingKeyType() {
        return "VARCHAR_IGNORECASE(50)";
    }
}
