package dev.ledger.transaction;

import dev.ledger.testing.DynamoDbProfile;
import dev.ledger.testing.WithDynalite;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** {@link ConcurrencyTest}'s storms (50 concurrent duplicates of one key applied once) with DynamoDB as the store. */
@QuarkusTest
@WithDynalite
@TestProfile(DynamoDbProfile.class)
class DynamoDbConcurrencyTest extends ConcurrencyTest {
}
