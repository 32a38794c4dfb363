package dev.kbackfill.core.registry;

/** The registry has no schema with the id a record names (HTTP 404, error code 40403): that record is poison. */
public final class UnknownSchemaException extends RegistryException {
    public UnknownSchemaException(String message) {
        super(message, null);
    }
}
