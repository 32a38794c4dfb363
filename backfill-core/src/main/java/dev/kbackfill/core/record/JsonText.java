package dev.kbackfill.core.record;

/** A nested value (object, array) carried as JSON text, so that sinks can tell it from a plain string. */
public record JsonText(String json) {
    @Override
    public String toString() {
        return json;
    }
}
