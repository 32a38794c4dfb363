package dev.kbackfill.core.registry;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;

/**
 * A small client of the Confluent schema-registry REST API: the Avro writer schema for a schema id, with its
 * references resolved, cached by id. {@code GET /schemas/ids/{id}}, and {@code GET
 * /subjects/{subject}/versions/{version}} for each reference. Basic auth and TLS come from the JDK's HTTP client.
 */
public final class SchemaRegistryClient {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final Optional<String> authorization;
    private final HttpClient http;
    private final Duration timeout;
    private final Map<Integer, Schema> byId = new ConcurrentHashMap<>();

    /**
     * @param baseUrl  the registry's URL, e.g. {@code http://registry:8081} or {@code https://host/apis/ccompat/v7}
     * @param user     basic-auth user, if any
     * @param password basic-auth password, if any
     */
    public SchemaRegistryClient(String baseUrl, Optional<String> user, Optional<String> password, Duration timeout) {
        String b = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.base = URI.create(b);
        this.authorization = user.map(u -> "Basic " + Base64.getEncoder().encodeToString(
                (u + ":" + password.orElse("")).getBytes(StandardCharsets.UTF_8)));
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NORMAL).build();
    }

    /**
     * The Avro schema registered under {@code id}.
     *
     * @throws UnknownSchemaException if the registry has no such id
     * @throws RegistryException      if the registry cannot answer
     */
    public Schema avroSchema(int id) {
        Schema cached = byId.get(id);
        if (cached != null) {
            return cached;
        }
        JsonNode doc = get("/schemas/ids/" + id, "schema id " + id);
        String type = doc.path("schemaType").asText("AVRO");
        if (!type.equals("AVRO")) {
            throw new UnknownSchemaException("schema id " + id + " is a " + type + " schema, not Avro");
        }
        Schema.Parser parser = new Schema.Parser();
        for (String referenced : references(doc, new LinkedHashMap<>())) {
            parse(parser, referenced, "a schema referenced by id " + id);
        }
        Schema schema = parse(parser, doc.path("schema").asText(), "schema id " + id);
        byId.put(id, schema);
        return schema;
    }

    /** The texts of every schema {@code doc} references, transitively, dependencies first. */
    private List<String> references(JsonNode doc, Map<String, String> seen) {
        List<String> ordered = new ArrayList<>();
        for (JsonNode ref : doc.path("references")) {
            String subject = ref.path("subject").asText();
            String version = ref.path("version").asText();
            String key = subject + "/" + version;
            if (seen.containsKey(key)) {
                continue;
            }
            seen.put(key, key);
            JsonNode referenced = get("/subjects/" + pathSegment(subject) + "/versions/" + version,
                    "reference " + ref.path("name").asText() + " (subject " + subject + " version " + version + ")");
            ordered.addAll(references(referenced, seen));
            ordered.add(referenced.path("schema").asText());
        }
        return ordered;
    }

    private static Schema parse(Schema.Parser parser, String text, String what) {
        try {
            return parser.parse(text);
        } catch (SchemaParseException e) {
            throw new UnknownSchemaException(what + " is not a valid Avro schema: " + e.getMessage());
        }
    }

    private JsonNode get(String path, String what) {
        URI uri = URI.create(base + path);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(timeout)
                .header("Accept", "application/vnd.schemaregistry.v1+json, application/json");
        authorization.ifPresent(a -> request.header("Authorization", a));
        HttpResponse<String> response;
        try {
            response = http.send(request.GET().build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new TransientRegistryException("the schema registry at " + base + " cannot be reached for " + what
                    + ": " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RegistryException("interrupted while asking the schema registry for " + what, e);
        }
        JsonNode body;
        try {
            body = JSON.readTree(response.body());
        } catch (IOException e) {
            if (response.statusCode() / 100 == 2) {
                throw new RegistryException("the schema registry at " + base + " answered " + what
                        + " with something that is not JSON: " + e.getMessage(), e);
            }
            body = JSON.createObjectNode();
        }
        if (response.statusCode() == 404) {
            int code = body.path("error_code").asInt(404);
            if (code == 40403 || path.startsWith("/schemas/ids/")) {
                throw new UnknownSchemaException("the schema registry at " + base + " has no " + what
                        + " (HTTP 404, error code " + code + ")");
            }
            throw new RegistryException("the schema registry at " + base + " has no " + what + " (HTTP 404, error code "
                    + code + ": " + body.path("message").asText("") + ")", null);
        }
        if (response.statusCode() == 401 || response.statusCode() == 403) {
            throw new RegistryException("the schema registry at " + base + " refused the credentials for " + what
                    + " (HTTP " + response.statusCode() + "); set --schema-registry-user and "
                    + "KBACKFILL_SCHEMA_REGISTRY_PASSWORD", null);
        }
        if (response.statusCode() / 100 == 5 || response.statusCode() == 429) {
            throw new TransientRegistryException("the schema registry at " + base + " answered HTTP "
                    + response.statusCode() + " for " + what + ": " + body.path("message").asText(response.body()), null);
        }
        if (response.statusCode() / 100 != 2) {
            throw new RegistryException("the schema registry at " + base + " answered HTTP " + response.statusCode()
                    + " for " + what + ": " + body.path("message").asText(response.body()), null);
        }
        return body;
    }

    /** A path segment: URLEncoder writes a space as '+', which is wrong inside a path. */
    static String pathSegment(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
