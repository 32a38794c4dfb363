package dev.kbackfill.resolver;

import static dev.kbackfill.resolver.Wording.Term.*;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.SortedMap;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A Kafka Connect sink connector's progress as its worker's REST API reports it ({@code GET
 * /connectors/NAME/offsets}, KIP-875, Kafka 3.5+): the offsets its consumer group committed, whatever the group is
 * called ({@code consumer.override.group.id} included). Read only: nothing is stopped, altered or reset.
 */
public final class ConnectOffsets {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    private ConnectOffsets() {
    }

    /**
     * The next offset to read per partition of {@code topic}, as sink connector {@code connector} committed them.
     *
     * @param url the worker's REST address, {@code http://HOST:PORT}
     * @throws RequestException    an unknown connector, a source connector, a worker too old for the API
     * @throws ResolutionException the worker cannot be reached or fails
     */
    public static SortedMap<Integer, Long> of(String url, String connector, String topic) {
        SortedMap<Integer, Long> offsets = new TreeMap<>();
        for (JsonNode entry : entries(url, connector)) {
            JsonNode partition = entry.path("partition");
            if (partition.path("kafka_topic").asText().equals(topic) && !entry.path("offset").isNull()) {
                offsets.put(partition.path("kafka_partition").asInt(), entry.path("offset").path("kafka_offset")
                        .asLong());
            }
        }
        return offsets;
    }

    /** The topics sink connector {@code connector} has committed offsets on. */
    public static java.util.SortedSet<String> topics(String url, String connector) {
        java.util.SortedSet<String> topics = new java.util.TreeSet<>();
        entries(url, connector).forEach(e -> topics.add(e.path("partition").path("kafka_topic").asText()));
        return topics;
    }

    private static java.util.List<JsonNode> entries(String url, String connector) {
        URI uri = URI.create(url.replaceAll("/+$", "") + "/connectors/"
                + URLEncoder.encode(connector, StandardCharsets.UTF_8).replace("+", "%20") + "/offsets");
        HttpResponse<String> response;
        try {
            HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
            response = client.send(HttpRequest.newBuilder(uri).timeout(TIMEOUT).header("Accept", "application/json")
                    .GET().build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new ResolutionException("Kafka Connect at " + url + " did not answer GET " + uri.getPath() + ": "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ResolutionException("interrupted while asking Kafka Connect at " + url, e);
        }
        JsonNode body;
        try {
            body = JSON.readTree(response.body());
        } catch (IOException e) {
            body = JSON.createObjectNode();
        }
        String message = body.path("message").asText("");
        if (response.statusCode() == 404) {
            if (message.isEmpty() || !message.toLowerCase(java.util.Locale.ROOT).contains("connector")) {
                throw new RequestException("invalid " + CONNECT_URL + " '" + url + "': it has no /connectors/NAME/offsets "
                        + "(HTTP 404): not a Kafka Connect worker, or one older than 3.5 (KIP-875); without "
                        + CONNECT_URL + ", connect:" + connector + " reads the group connect-" + connector);
            }
            throw new RequestException("invalid connect:" + connector + ": Kafka Connect at " + url + " says: "
                    + message);
        }
        if (response.statusCode() / 100 != 2) {
            throw new ResolutionException("Kafka Connect at " + url + " answered GET " + uri.getPath() + " with HTTP "
                    + response.statusCode() + (message.isEmpty() ? "" : ": " + message), null);
        }
        java.util.List<JsonNode> entries = new java.util.ArrayList<>();
        for (JsonNode entry : body.path("offsets")) {
            JsonNode partition = entry.path("partition");
            if (!partition.has("kafka_topic") || !partition.has("kafka_partition")) {
                throw new RequestException("invalid connect:" + connector + ": it is a source connector (its offsets "
                        + "are " + partition + ", not a topic's positions); connect: reads a sink connector's progress");
            }
            entries.add(entry);
        }
        return entries;
    }
}
