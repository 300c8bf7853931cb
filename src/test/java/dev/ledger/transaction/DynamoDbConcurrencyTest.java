package dev.ledger.transaction;

import dev.ledger.testing.DynamoDbProfile;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** {@link ConcurrencyTest}'s storms (50 concurrent duplicates of one key applied once) with DynamoDB as the store. */
@QuarkusTest
@EnabledIfEnvironmentVariable(named = "AWS_ENDPOINT_URL_DYNAMODB", matches = ".+",
        disabledReason = "dynalite comes with the local servers (pom profile local-services, .ci/services)")
@TestProfile(DynamoDbProfile.class)
class DynamoDbConcurrencyTest extends ConcurrencyTest {
}
