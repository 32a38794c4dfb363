package dev.kbackfill.core.registry;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;

/**
 * A small client of the Confluent schema-registry REST API: the writer schema for a schema id (Avro, Protobuf or
 * JSON Schema), with its references resolved, cached by id. {@code GET /schemas/ids/{id}}, and {@code GET
 * /subjects/{subject}/versions/{version}} for each reference. Basic auth and TLS come from the JDK's HTTP client.
 */
public final class SchemaRegistryClient {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final Optional<String> authorization;
    private final HttpClient http;
    private final Duration timeout;
    private final Map<Integer, Schema> byId = new ConcurrentHashMap<>();
    private final Map<Integer, RegisteredSchema> registered = new ConcurrentHashMap<>();

    /**
     * A schema as the registry holds it.
     *
     * @param id         its id
     * @param type       {@code AVRO}, {@code PROTOBUF} or {@code JSON} (the registry's {@code schemaType})
     * @param text       the schema text: Avro JSON, {@code .proto} source or a JSON Schema document
     * @param references every schema it references, transitively, by the name it uses for it (an Avro full name, a
     *                   Protobuf import path, a JSON Schema {@code $ref}), dependencies before their dependents
     */
    public record RegisteredSchema(int id, String type, String text, Map<String, String> references) {
        public RegisteredSchema {
            references = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(references));
        }
    }

    /**
     * @param baseUrl  the registry's URL, e.g. {@code http://registry:8081} or {@code https://host/apis/ccompat/v7}
     * @param user     basic-auth user, if any
     * @param password basic-auth password, if any
     */
    public SchemaRegistryClient(String baseUrl, Optional<String> user, Optional<String> password, Duration timeout) {
        this(baseUrl, user.map(u -> basicAuth(u, password.orElse(""))).orElse(null), null, timeout);
    }

    /**
     * @param authorization the {@code Authorization} header, if any ({@link #basicAuth}, {@link #bearer})
     * @param tls           the TLS context of an {@code https} registry with a private CA ({@link #trusting}); the
     *                      JDK's default trust otherwise
     */
    public static SchemaRegistryClient create(String baseUrl, Optional<String> authorization,
                                              Optional<javax.net.ssl.SSLContext> tls, Duration timeout) {
        return new SchemaRegistryClient(baseUrl, authorization.orElse(null), tls.orElse(null), timeout);
    }

    private SchemaRegistryClient(String baseUrl, String authorization, javax.net.ssl.SSLContext tls, Duration timeout) {
        String b = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.base = URI.create(b);
        this.authorization = Optional.ofNullable(authorization);
        this.timeout = timeout;
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NORMAL);
        if (tls != null) {
            http.sslContext(tls);
        }
        this.http = http.build();
    }

    /** An {@code Authorization} header for HTTP basic auth. */
    public static String basicAuth(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    /** An {@code Authorization} header for a bearer token (OAuth, a registry's API token). */
    public static String bearer(String token) {
        return "Bearer " + token.strip();
    }

    /**
     * A TLS context trusting the certificates of a trust store (PKCS12 or JKS), e.g. a private CA's.
     *
     * @throws RegistryException when the store cannot be read
     */
    public static javax.net.ssl.SSLContext trusting(java.nio.file.Path trustStore, char[] password) {
        try (var in = java.nio.file.Files.newInputStream(trustStore)) {
            java.security.KeyStore store = java.security.KeyStore.getInstance(java.security.KeyStore.getDefaultType());
            store.load(in, password);
            javax.net.ssl.TrustManagerFactory trust = javax.net.ssl.TrustManagerFactory.getInstance(
                    javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            javax.net.ssl.SSLContext tls = javax.net.ssl.SSLContext.getInstance("TLS");
            tls.init(null, trust.getTrustManagers(), null);
            return tls;
        } catch (IOException | java.security.GeneralSecurityException e) {
            throw new RegistryException("cannot read the trust store " + trustStore + ": "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()), e);
        }
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
        RegisteredSchema registered = schema(id, "AVRO");
        Schema.Parser parser = new Schema.Parser();
        for (String referenced : registered.references().values()) {
            parse(parser, referenced, "a schema referenced by id " + id);
        }
        Schema schema = parse(parser, registered.text(), "schema id " + id);
        byId.put(id, schema);
        return schema;
    }

    /**
     * The schema registered under {@code id}, which must be of {@code type} ({@code AVRO}, {@code PROTOBUF} or
     * {@code JSON}; a registry that omits {@code schemaType} means Avro), with its references.
     *
     * @throws UnknownSchemaException if the registry has no such id, or it is of another type
     * @throws RegistryException      if the registry cannot answer
     */
    public RegisteredSchema schema(int id, String type) {
        RegisteredSchema cached = registered.get(id);
        if (cached == null) {
            JsonNode doc = get("/schemas/ids/" + id, "schema id " + id);
            Map<String, String> references = new LinkedHashMap<>();
            references(doc, new java.util.HashSet<>(), references);
            cached = new RegisteredSchema(id, doc.path("schemaType").asText("AVRO"), doc.path("schema").asText(),
                    references);
            registered.put(id, cached);
        }
        if (!cached.type().equals(type)) {
            throw new UnknownSchemaException("schema id " + id + " is " + label(cached.type()) + ", not "
                    + label(type));
        }
        return cached;
    }

    private static String label(String type) {
        return switch (type) {
            case "AVRO" -> "Avro";
            case "PROTOBUF" -> "Protobuf";
            case "JSON" -> "JSON Schema";
            default -> type;
        };
    }

    /** Every schema {@code doc} references, transitively, by name, dependencies first. */
    private void references(JsonNode doc, java.util.Set<String> seen, Map<String, String> into) {
        for (JsonNode ref : doc.path("references")) {
            String subject = ref.path("subject").asText();
            String version = ref.path("version").asText();
            if (!seen.add(subject + "/" + version)) {
                continue;
            }
            JsonNode referenced = get("/subjects/" + pathSegment(subject) + "/versions/" + version,
                    "reference " + ref.path("name").asText() + " (subject " + subject + " version " + version + ")");
            references(referenced, seen, into);
            into.put(ref.path("name").asText(), referenced.path("schema").asText());
        }
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
        } catch (javax.net.ssl.SSLException e) {
            // not transient: the registry's certificate is not trusted here (or TLS fails otherwise)
            throw new RegistryException("the schema registry at " + base + " failed TLS for " + what + ": "
                    + e.getMessage() + " (a private CA needs --schema-registry-truststore)", e);
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
            if (code != 40403 && path.startsWith("/schemas/ids/") && !answersTheApi()) {
                // not a registry's "no such schema": the URL is not the API's base, and no record is to blame
                throw new dev.kbackfill.resolver.RequestException("invalid --schema-registry-url '" + base
                        + "': it answers HTTP 404 for " + path + " and for /subjects; is this the registry's API base "
                        + "URL? (e.g. http://registry:8081, or Apicurio's http://host:8080/apis/ccompat/v7)");
            }
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

    /** Whether the base URL answers the Confluent API at all: {@code GET /subjects} is a JSON array there. */
    private boolean answersTheApi() {
        try {
            return get("/subjects", "its subjects").isArray();
        } catch (RegistryException | dev.kbackfill.resolver.RequestException e) {
            // credentials refused, a server error: the API is there; a 404 or a page that is not JSON: it is not
            return !e.getMessage().contains("(HTTP 404") && !e.getMessage().contains("that is not JSON");
        }
    }

    /** A path segment: URLEncoder writes a space as '+', which is wrong inside a path. */
    static String pathSegment(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
