package dev.kbackfill.core.record;

/**
 * A nested value (object, array) carried as JSON text, so that sinks can tell it from a plain string, and a version
 * field's dotted path can look inside it.
 */
public record JsonText(String json) implements dev.kbackfill.core.version.VersionField.Nested {
    @Override
    public String toString() {
        return json;
    }
}
