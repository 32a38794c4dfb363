package org.apache.kafka.common.utils;

/**
 * Where Kafka's clients kept {@code LogContext} before 4.4 (now {@code org.apache.kafka.common.utils.internals}):
 * {@code LocalTieredStorage}, which TieredStorageIT's broker stores its remote segments with, comes from the only
 * published kafka-storage test jar (4.3.1) and was built against this name. Nothing else uses it.
 */
public class LogContext extends org.apache.kafka.common.utils.internals.LogContext {

    public LogContext(String prefix) {
        super(prefix);
    }

    public LogContext() {
        super();
    }
}
