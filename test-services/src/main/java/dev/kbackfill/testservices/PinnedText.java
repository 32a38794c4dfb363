package dev.kbackfill.testservices;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Text a test pins in its module's {@code src/test/resources} (the SQL a dialect or an engine produces) so that a
 * reviewer reads the text, not the code that makes it. With {@code -Dkbackfill.sql.write=true} the text given is
 * written there first (after a deliberate change: read the diff).
 */
public final class PinnedText {

    private PinnedText() {
    }

    /** The pinned text of {@code resource} on {@code test}'s class path, after writing {@code actual} there if asked. */
    public static Optional<String> of(Class<?> test, String resource, String actual) {
        try {
            if (Boolean.getBoolean("kbackfill.sql.write")) {
                Path file = Path.of("src/test/resources", resource);
                Files.createDirectories(file.getParent());
                Files.writeString(file, actual);
            }
            try (InputStream in = test.getClassLoader().getResourceAsStream(resource)) {
                return in == null ? Optional.empty() : Optional.of(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
