package dev.ledger.commands.rabbitmq;

import dev.ledger.testing.DynamoDbLab;
import dev.ledger.testing.DynamoDbProfile;
import dev.ledger.testing.WithDynalite;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * {@link CommandsTest}'s RabbitMQ door with DynamoDB as the store: replays, 50 copies of one command at once,
 * a copy of an in-flight command waiting for its outcome, the store forgetting a key.
 */
@QuarkusTest
@WithDynalite
@TestProfile(DynamoDbProfile.class)
class DynamoDbCommandsTest extends CommandsTest {
    @Override
    void flushStore() {
        DynamoDbLab.store().flush();
    }
}
