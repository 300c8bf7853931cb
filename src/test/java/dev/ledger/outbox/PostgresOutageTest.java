package dev.ledger.outbox;

import dev.ledger.testing.ApiClient;
import dev.ledger.testing.FailureLab;
import dev.ledger.testing.FailureLabProfile;
import dev.ledger.testing.PaymentLoad;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import javax.sql.DataSource;
import java.net.URL;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;

import static dev.ledger.outbox.OutboxTest.metric;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * PostgreSQL unreachable (the failure lab's proxy cut) while payments come in and the relay
 * publishes: the relay fails, waits, and resumes by itself once PostgreSQL is back; every event
 * is published, none twice, in order.
 */
@QuarkusTest
@EnabledIfEnvironmentVariable(named = "QUARKUS_DATASOURCE_REACTIVE_URL", matches = ".+",
        disabledReason = "the failure lab proxies local servers (pom profile local-services); Dev Services run here")
@TestProfile(FailureLabProfile.class)
class PostgresOutageTest {
    @TestHTTPResource("/")
    URL base;

    @Inject
    DataSource dataSource; // straight to PostgreSQL, not through the proxy

    @BeforeEach
    @AfterEach
    void healthyDependencies() {
        FailureLab.healAll();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> given().when().get("/q/health/ready").statusCode() == 200);
    }

    private long unpublished() throws Exception {
        try (Connection db = dataSource.getConnection()) {
            return EventReconciliation.unpublished(db);
        }
    }

    @Test
    void theRelayWaitsWhilePostgresIsDownAndResumesByItself() throws Exception {
        try (EventTap tap = EventTap.onSharedBroker()) {
            PaymentLoad load = new PaymentLoad("postgres-outage", ApiClient.DEV, List.of(base.toURI()));
            load.steady(4, 25);
            await().atMost(Duration.ofSeconds(30)).until(() -> tap.of(load.accounts()).size() >= 50);

            double failedBefore = metric("ledger_events_relay_failures_total");
            long start = System.nanoTime();
            FailureLab.postgresProxy().cut();
            // Down until the relay has failed and retried a few times (backing off: 100 ms, 200 ms, ... 1 s).
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> metric("ledger_events_relay_failures_total") >= failedBefore + 8);
            FailureLab.postgresProxy().heal();
            double outageSeconds = (System.nanoTime() - start) / 1e9;
            double failedRounds = metric("ledger_events_relay_failures_total") - failedBefore;

            double publishedAtHeal = metric("ledger_events_published_total");
            await().atMost(Duration.ofSeconds(60)).until(() -> metric("ledger_events_published_total") >= publishedAtHeal + 100);
            load.stop();
            await().atMost(Duration.ofSeconds(60)).until(() -> unpublished() == 0);
            tap.drain(Duration.ofSeconds(30));

            try (Connection db = dataSource.getConnection()) {
                EventReconciliation reconciliation = EventReconciliation.of(tap.deliveries(), db, load.accounts());
                System.out.printf("[postgres-outage] load: %s; PostgreSQL down %.1f s, %.0f failed relay rounds; %s%n",
                        load.summary(), outageSeconds, failedRounds, reconciliation.summary());
                assertTrue(load.statuses().getOrDefault(503, 0L) > 0, "PostgreSQL was not missed: " + load.summary());
                assertTrue(reconciliation.complete(), reconciliation.summary());
                assertEquals(0, reconciliation.duplicates, reconciliation.summary());
                assertTrue(failedRounds <= 2 * outageSeconds + 10, failedRounds + " failed rounds in " + outageSeconds + " s");
            }
        }
    }
}
