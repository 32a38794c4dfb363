package dev.kbackfill.core.sink;

import java.util.List;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * Creates sinks for {@code --sink} URLs of one kind; found with {@link ServiceLoader}, so a sink module on the
 * classpath is all it takes.
 */
public interface SinkFactory {

    /** Whether this factory handles the URL, e.g. every {@code jdbc:} URL. */
    boolean accepts(String url);

    /** The URL forms, for error messages, e.g. {@code jdbc:postgresql://HOST/DB}. */
    List<String> forms();

    /**
     * @throws SinkConfigException for a URL or settings this kind of sink cannot use
     */
    Sink create(SinkSettings settings);

    /**
     * Only the store of the destination's jobs, for a command that administers them ({@code status}, {@code reset},
     * {@code jobs}): nothing of the writer is built. Open it with {@link JobStore#openForJobs()}; closing it closes
     * what it opened.
     *
     * @throws SinkConfigException for a URL or settings this kind of sink cannot use
     */
    JobStore createJobStore(SinkSettings settings);

    /** The sink for the settings' URL among the factories on the classpath. */
    static Sink forSettings(SinkSettings settings) {
        return factoryFor(settings).create(settings);
    }

    /** The factory on the classpath that accepts the settings' URL. */
    private static SinkFactory factoryFor(SinkSettings settings) {
        List<SinkFactory> factories = ServiceLoader.load(SinkFactory.class).stream()
                .map(ServiceLoader.Provider::get).toList();
        for (SinkFactory f : factories) {
            if (f.accepts(settings.url())) {
                return f;
            }
        }
        throw new SinkConfigException("invalid --sink '" + redact(settings.url()) + "': expected "
                + factories.stream().flatMap(f -> f.forms().stream()).collect(Collectors.joining(", ")));
    }

    /**
     * The store of the settings' destination's jobs, for a command that only administers them ({@code status},
     * {@code reset}, {@code jobs}): open it with {@link JobStore#openForJobs()}.
     */
    static JobStore jobStore(SinkSettings settings) {
        return factoryFor(settings).createJobStore(settings);
    }

    /**
     * The URL as one destination has one form of it, for job names and messages: query parameters in order of name
     * ({@code ?user=a&password=b} and {@code ?password=b&user=a} are one sink), passwords masked.
     */
    static String canonical(String url) {
        return redact(sortParameters(url));
    }

    private static String sortParameters(String url) {
        int q = url.indexOf('?');
        if (q < 0) {
            return url;
        }
        String query = url.substring(q + 1);
        String fragment = "";
        int hash = query.indexOf('#');
        if (hash >= 0) {
            fragment = query.substring(hash);
            query = query.substring(0, hash);
        }
        java.util.List<String> params = new java.util.ArrayList<>(java.util.List.of(query.split("&")));
        params.removeIf(String::isEmpty);
        params.sort(java.util.Comparator.comparing((String p) -> p.contains("=") ? p.substring(0, p.indexOf('=')) : p)
                .thenComparing(java.util.Comparator.naturalOrder()));
        return url.substring(0, q) + (params.isEmpty() ? "" : "?" + String.join("&", params)) + fragment;
    }

    /** The URL without a password: {@code user:secret@} and {@code password=} values are masked. */
    static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&;]*", "$1***").replaceAll("(//[^/:@]+:)[^@/]*@", "$1***@");
    }
}
