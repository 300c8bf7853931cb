package dev.ledger.failure;

import dev.ledger.testing.DynamoDbLab;
import dev.ledger.testing.DynamoDbProfile;
import dev.ledger.testing.WithDynalite;
import dev.ledger.testing.FastPathStore;
import dev.ledger.testing.TcpProxy;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * {@link RedisFailureTest}'s outages with DynamoDB (dynalite behind a proxy) as the store: down, slow, the
 * breaker, a reserve that lands after its timeout, the breaker opening while a request holds its key.
 */
@QuarkusTest
@WithDynalite
@TestProfile(DynamoDbProfile.class)
class DynamoDbFailureTest extends RedisFailureTest {
    @Override
    FastPathStore store() {
        return DynamoDbLab.store();
    }

    @Override
    TcpProxy storeProxy() {
        return DynamoDbLab.proxy();
    }

    @Override
    long storeTimeoutMillis() {
        return 2_000; // DynamoDbProfile's
    }

    /** Not a test here: DynamoDB has no scripts; a table that forgot its keys is IdempotencyTest's flush, on both stores. */
    @Override
    void losingTheScriptCacheCostsOnlyAReload() {
    }
}
