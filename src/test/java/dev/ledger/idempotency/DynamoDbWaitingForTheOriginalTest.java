package dev.ledger.idempotency;

import dev.ledger.testing.DynamoDbProfile;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * {@link WaitingForTheOriginalTest}'s {@code Prefer: wait} with DynamoDB as the store: the waiters are on the
 * original's instance, so the store's own notice wakes them (dev.ledger.dynamodb.DynamoDbSettledKeys); a
 * waiter elsewhere would wake at the next recheck.
 */
@QuarkusTest
@EnabledIfEnvironmentVariable(named = "AWS_ENDPOINT_URL_DYNAMODB", matches = ".+",
        disabledReason = "dynalite comes with the local servers (pom profile local-services, .ci/services)")
@TestProfile(DynamoDbProfile.class)
class DynamoDbWaitingForTheOriginalTest extends WaitingForTheOriginalTest {
}
