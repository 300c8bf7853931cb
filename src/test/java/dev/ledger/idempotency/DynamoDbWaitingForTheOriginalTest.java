package dev.ledger.idempotency;

import dev.ledger.testing.DynamoDbProfile;
import dev.ledger.testing.WithDynalite;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * {@link WaitingForTheOriginalTest}'s {@code Prefer: wait} with DynamoDB as the store: the waiters are on the
 * original's instance, so the store's own notice wakes them (dev.ledger.dynamodb.DynamoDbSettledKeys); a
 * waiter elsewhere would wake at the next recheck.
 */
@QuarkusTest
@WithDynalite
@TestProfile(DynamoDbProfile.class)
class DynamoDbWaitingForTheOriginalTest extends WaitingForTheOriginalTest {
}
