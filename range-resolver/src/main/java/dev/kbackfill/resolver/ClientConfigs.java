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
}
