package dev.kbackfill.resolver;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The user's Kafka client settings ({@code --command-config}, {@code -X}) narrowed to the ones one client accepts,
 * so that an admin client, a consumer and a producer built from the same settings do not warn about the others'.
 */
public final class ClientConfigs {

    private ClientConfigs() {
    }

    /** The entries of {@code config} whose keys are in {@code names} (e.g. {@code ConsumerConfig.configNames()}). */
    public static Map<String, Object> only(Map<String, Object> config, Set<String> names) {
        Map<String, Object> out = new HashMap<>();
        config.forEach((k, v) -> {
            if (names.contains(k)) {
                out.put(k, v);
            }
        });
        return out;
    }

    /**
     * Why a call to a cluster failed, for people: a timeout names the cluster's bootstrap servers and how long it
     * was given ({@code default.api.timeout.ms}: {@code --connect-timeout}); anything else its own message.
     */
    public static String why(Map<String, ?> config, Throwable cause) {
        if (cause instanceof org.apache.kafka.common.errors.TimeoutException) {
            Object timeout = config.get("default.api.timeout.ms");
            long seconds = (timeout == null ? 60_000 : Long.parseLong(timeout.toString())) / 1000;
            return "no answer from the cluster at " + config.get("bootstrap.servers") + " within " + seconds
                    + " s (is it reachable from here, with these security settings?)";
        }
        return cause.getClass().getSimpleName() + ": " + cause.getMessage();
    }
}
