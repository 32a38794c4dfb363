package dev.kbackfill.core.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;

import org.apache.avro.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The client against an in-process HTTP server speaking the registry's documented responses. */
class SchemaRegistryClientTest {

    private static final String ORDER = "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"shop\",\"fields\":"
            + "[{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"ship_to\",\"type\":\"shop.Address\"}]}";
    private static final String ADDRESS = "{\"type\":\"record\",\"name\":\"Address\",\"namespace\":\"shop\",\"fields\":"
            + "[{\"name\":\"city\",\"type\":\"string\"},{\"name\":\"country\",\"type\":\"shop.Country\"}]}";
    private static final String COUNTRY = "{\"type\":\"enum\",\"name\":\"Country\",\"namespace\":\"shop\",\"symbols\":[\"FR\",\"DE\"]}";

    private final FakeRegistry registry = FakeRegistry.start();

    @AfterEach
    void stop() {
        registry.close();
    }

    private SchemaRegistryClient client() {
        return new SchemaRegistryClient(registry.url() + "/", Optional.empty(), Optional.empty(), Duration.ofSeconds(5));
    }

    @Test
    void fetchesASchemaByIdOnceAndCachesIt() {
        registry.schema(7, "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"}]}", null);
        SchemaRegistryClient c = client();
        Schema s = c.avroSchema(7);
        assertThat(s.getField("a").schema().getType()).isEqualTo(Schema.Type.LONG);
        assertThat(c.avroSchema(7)).isSameAs(s);
        assertThat(registry.requests).containsExactly("/schemas/ids/7");
    }

    @Test
    void resolvesReferencesTransitivelyThroughSubjectVersions() {
        registry.schema(3, ORDER, "[{\"name\":\"shop.Address\",\"subject\":\"shop address\",\"version\":2}]");
        registry.answers.put("/subjects/shop%20address/versions/2", new FakeRegistry.Answer(200,
                "{\"subject\":\"shop address\",\"version\":2,\"id\":2,\"schema\":" + FakeRegistry.quote(ADDRESS)
                        + ",\"references\":[{\"name\":\"shop.Country\",\"subject\":\"country\",\"version\":1}]}"));
        registry.answers.put("/subjects/country/versions/1", new FakeRegistry.Answer(200,
                "{\"subject\":\"country\",\"version\":1,\"id\":1,\"schema\":" + FakeRegistry.quote(COUNTRY) + "}"));
        Schema order = client().avroSchema(3);
        assertThat(order.getField("ship_to").schema().getField("country").schema().getEnumSymbols())
                .containsExactly("FR", "DE");
        // a space in a subject is %20 in the path, never '+'
        assertThat(registry.requests).contains("/subjects/shop%20address/versions/2");
    }

    @Test
    void aBearerTokenGoesAsTheAuthorizationHeader() {
        registry.schema(4, "{\"type\":\"string\"}", null);
        SchemaRegistryClient c = SchemaRegistryClient.create(registry.url(),
                java.util.Optional.of(SchemaRegistryClient.bearer("tok-123\n")), java.util.Optional.empty(),
                Duration.ofSeconds(5));
        c.avroSchema(4);
        assertThat(registry.authorizations).containsExactly("Bearer tok-123");
    }

    @Test
    void anHttpsRegistryWithAPrivateCaIsTrustedThroughATrustStoreAndRefusedWithoutOne(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        // a self-signed certificate for localhost, made by the JDK's keytool
        java.nio.file.Path keystore = dir.resolve("registry.p12");
        java.nio.file.Path cert = dir.resolve("registry.crt");
        java.nio.file.Path truststore = dir.resolve("trust.p12");
        String keytool = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        run(keytool, "-genkeypair", "-alias", "registry", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=localhost",
                "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2", "-storetype", "PKCS12", "-keystore",
                keystore.toString(), "-storepass", "changeit", "-keypass", "changeit");
        run(keytool, "-exportcert", "-alias", "registry", "-keystore", keystore.toString(), "-storepass", "changeit",
                "-file", cert.toString());
        run(keytool, "-importcert", "-noprompt", "-alias", "registry", "-file", cert.toString(), "-storetype", "PKCS12",
                "-keystore", truststore.toString(), "-storepass", "trustpass");
        java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
        try (var in = java.nio.file.Files.newInputStream(keystore)) {
            ks.load(in, "changeit".toCharArray());
        }
        javax.net.ssl.KeyManagerFactory keys = javax.net.ssl.KeyManagerFactory.getInstance(
                javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        keys.init(ks, "changeit".toCharArray());
        javax.net.ssl.SSLContext serverTls = javax.net.ssl.SSLContext.getInstance("TLS");
        serverTls.init(keys.getKeyManagers(), null, null);
        try (FakeRegistry https = new FakeRegistry(serverTls)) {
            https.schema(5, "{\"type\":\"long\"}", null);
            SchemaRegistryClient trusting = SchemaRegistryClient.create(https.url(), java.util.Optional.empty(),
                    java.util.Optional.of(SchemaRegistryClient.trusting(truststore, "trustpass".toCharArray())),
                    Duration.ofSeconds(5));
            assertThat(trusting.avroSchema(5).getType()).isEqualTo(Schema.Type.LONG);
            SchemaRegistryClient defaults = new SchemaRegistryClient(https.url(), java.util.Optional.empty(),
                    java.util.Optional.empty(), Duration.ofSeconds(5));
            assertThatThrownBy(() -> defaults.avroSchema(5)).isInstanceOf(RegistryException.class)
                    .isNotInstanceOf(TransientRegistryException.class).hasMessageContaining("failed TLS")
                    .hasMessageContaining("--schema-registry-truststore");
        }
    }

    private static void run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
    }

    @Test
    void anUnknownIdIsAnUnknownSchema() {
        registry.answers.put("/schemas/ids/99", new FakeRegistry.Answer(404,
                "{\"error_code\":40403,\"message\":\"Schema 99 not found\"}"));
        assertThatThrownBy(() -> client().avroSchema(99))
                .isInstanceOf(UnknownSchemaException.class)
                .hasMessage("the schema registry at " + registry.url() + " has no schema id 99 (HTTP 404, error code 40403)");
    }

    @Test
    void credentialsGoAsBasicAuthAndARefusalSaysSo() {
        registry.answers.put("/schemas/ids/1", new FakeRegistry.Answer(401, "{\"error_code\":401,\"message\":\"no\"}"));
        SchemaRegistryClient c = new SchemaRegistryClient(registry.url(), Optional.of("alice"), Optional.of("s3cret"),
                Duration.ofSeconds(5));
        assertThatThrownBy(() -> c.avroSchema(1))
                .isInstanceOf(RegistryException.class).isNotInstanceOf(UnknownSchemaException.class)
                .hasMessageContaining("refused the credentials").hasMessageNotContaining("s3cret");
        assertThat(registry.authorizations).containsExactly("Basic YWxpY2U6czNjcmV0");
    }

    @Test
    void aServerErrorIsARegistryFailureNotAPoisonRecord() {
        registry.answers.put("/schemas/ids/1", new FakeRegistry.Answer(500, "{\"error_code\":50001,\"message\":\"store down\"}"));
        assertThatThrownBy(() -> client().avroSchema(1))
                .isInstanceOf(RegistryException.class).isNotInstanceOf(UnknownSchemaException.class)
                .hasMessageContaining("answered HTTP 500 for schema id 1: store down");
    }

    @Test
    void anUnreachableRegistryIsARegistryFailure() {
        SchemaRegistryClient c = new SchemaRegistryClient("http://127.0.0.1:1", Optional.empty(), Optional.empty(),
                Duration.ofSeconds(2));
        assertThatThrownBy(() -> c.avroSchema(1))
                .isInstanceOf(RegistryException.class).isNotInstanceOf(UnknownSchemaException.class)
                .hasMessageStartingWith("the schema registry at http://127.0.0.1:1 cannot be reached for schema id 1");
    }
}
