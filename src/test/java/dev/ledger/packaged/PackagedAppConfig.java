package dev.ledger.packaged;

import dev.ledger.testing.ApiClient;
import dev.ledger.testing.PackagedApp;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.restassured.RestAssured;

import java.net.URL;
import java.util.Map;

/**
 * What the packaged application under {@code @QuarkusIntegrationTest} is given beyond its own
 * configuration. It runs with the {@code prod} profile, as deployed, which has no API key: the map
 * returned here reaches it as {@code -D} options (jar and native executable alike), so it knows the
 * clients below. Its servers come from elsewhere: where Docker runs, Dev Services are meant to start
 * PostgreSQL and Redis and pass their settings the same way (not tried: no Docker where this was
 * written); without Docker, the pom's {@code local-services}
 * profile sets {@code quarkus.datasource.*} and {@code quarkus.redis.hosts} as system properties of
 * the failsafe JVM (the tests' own database {@code tests.pg-db} and Redis database
 * {@code tests.redis-db}), which Quarkus passes on to the application it launches.
 */
public class PackagedAppConfig implements QuarkusTestResourceLifecycleManager {
    public static final ApiClient CLIENT = new ApiClient("it", "packaged-it-key-0123456789abcdef");
    public static final ApiClient OTHER_CLIENT = new ApiClient("it-other", "packaged-it-other-key-0123456789");

    @Override
    public Map<String, String> start() {
        return Map.of("ledger.api-keys", CLIENT.id() + ":" + PackagedApp.sha256Hex(CLIENT.apiKey())
                + "," + OTHER_CLIENT.id() + ":" + PackagedApp.sha256Hex(OTHER_CLIENT.apiKey()));
    }

    @Override
    public void stop() {
    }

    /** Where the launched application listens (RestAssured is pointed there before each test). */
    public static URL baseUrl() throws Exception {
        return new URL(RestAssured.baseURI + ":" + RestAssured.port + "/");
    }
}
