package dev.ledger.transfer;

import dev.ledger.testing.DynamoDbLab;
import dev.ledger.testing.DynamoDbProfile;
import dev.ledger.testing.FastPathStore;
import dev.ledger.testing.WithDynalite;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** {@link TransferIdempotencyTest}'s replays with DynamoDB (dynalite) as the store. */
@QuarkusTest
@WithDynalite
@TestProfile(DynamoDbProfile.class)
class DynamoDbTransferIdempotencyTest extends TransferIdempotencyTest {
    @Override
    FastPathStore store() {
        return DynamoDbLab.store();
    }
}
