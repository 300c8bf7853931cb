package dev.ledger.dynamodb;

import dev.ledger.redis.RedisIdempotencyStoreTest;
import dev.ledger.testing.DynamoDbLab;
import dev.ledger.testing.DynamoDbProfile;
import dev.ledger.testing.WithDynalite;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * {@link RedisIdempotencyStoreTest}'s leases and fencing with the DynamoDB store. A lease ends by its item's
 * {@code until} passing while the item stays, as DynamoDB's lazy TTL leaves it: every read must see it as absent.
 */
@QuarkusTest
@WithDynalite
@TestProfile(DynamoDbProfile.class)
class DynamoDbIdempotencyStoreTest extends RedisIdempotencyStoreTest {
    @Override
    protected StoredKeys stored() {
        return new StoredKeys() {
            @Override
            public void expire(String keyId) {
                DynamoDbLab.expire(keyId);
            }

            @Override
            public String owner(String keyId) {
                AttributeValue owner = DynamoDbLab.item(keyId).get("owner");
                return owner == null ? null : owner.s();
            }

            @Override
            public long remainingMillis(String keyId) {
                return Long.parseLong(DynamoDbLab.item(keyId).get("until").n()) - System.currentTimeMillis();
            }
        };
    }
}
