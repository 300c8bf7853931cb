package dev.ledger.security;

import dev.ledger.shard.ShardsProfile;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** {@link CrossTenantTest} with its client {@code dev} on a second PostgreSQL primary ({@link ShardsProfile}). */
@QuarkusTest
@TestProfile(ShardsProfile.class)
class ShardedCrossTenantTest extends CrossTenantTest {
}
