package dev.kbackfill.resolver;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The user's Kafka client settings ({@code --command-config}, {@code -X}) narrowed to the ones one client accepts,
 * so that an admin client, a consumer and a producer built from the same settings do not warn about the others'.
 */
public final class ClientConfigs {

    /** Setting names that hold credentials: they never become part of a stored request, plan or job. */
    private static final java.util.regex.Pattern CREDENTIAL = java.util.regex.Pattern.compile(
            "(?i)(secret|password|token|jaas|session|access\\.key|credential(?!s?\\.provider))");

    private ClientConfigs() {
    }

    /** Whether setting {@code key} holds a credential ({@code fs.s3a.secret.key}, {@code sasl.jaas.config}). */
    public static boolean isCredential(String key) {
        return CREDENTIAL.matcher(key).find();
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

    /**
     * Makes a client ({@code Admin.create}, a consumer, a producer); settings the client refuses when it is made (a
     * bootstrap server whose host does not resolve, an empty or malformed list) are bad input, named with
     * {@code option}, the option that gave them (their value may also come from {@code -X} or a config file).
     */
    public static <T> T creating(String option, Map<String, ?> config, java.util.function.Supplier<T> make) {
        try {
            return make.get();
        } catch (org.apache.kafka.common.KafkaException e) {
            for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
                if (t instanceof org.apache.kafka.common.config.ConfigException c) {
                    throw new RequestException("invalid " + option + " '" + config.get("bootstrap.servers") + "': "
                            + c.getMessage() + " (expected HOST:PORT[,HOST:PORT...] of a reachable broker; is the "
                            + "host name right?)");
                }
            }
            throw e;
        }
    }

    /** A properties file's entries (a client settings file), named in errors by {@code option}. */
    public static Map<String, String> fromFile(String option, java.nio.file.Path file) {
        java.util.Properties p = new java.util.Properties();
        try (java.io.Reader r = java.nio.file.Files.newBufferedReader(file)) {
            p.load(r);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new RequestException("cannot read " + option + " '" + file + "': no such file");
        } catch (java.io.IOException e) {
            throw new RequestException("cannot read " + option + " '" + file + "': " + e.getMessage());
        }
        Map<String, String> m = new HashMap<>();
        p.forEach((k, v) -> m.put(k.toString(), v.toString()));
        return m;
    }
}
