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

    /** The sink for the settings' URL among the factories on the classpath. */
    static Sink forSettings(SinkSettings settings) {
        List<SinkFactory> factories = ServiceLoader.load(SinkFactory.class).stream()
                .map(ServiceLoader.Provider::get).toList();
        for (SinkFactory f : factories) {
            if (f.accepts(settings.url())) {
                return f.create(settings);
            }
        }
        throw new SinkConfigException("invalid --sink '" + redact(settings.url()) + "': expected "
                + factories.stream().flatMap(f -> f.forms().stream()).collect(Collectors.joining(", ")));
    }

    /** The URL without a password: {@code user:secret@} and {@code password=} values are masked. */
    static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&;]*", "$1***").replaceAll("(//[^/:@]+:)[^@/]*@", "$1***@");
    }
}
