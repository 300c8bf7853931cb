package dev.ledger.dynamodb;

import dev.ledger.config.LedgerConfig;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * The store's table, at start (off the event loops, on the thread that starts the service): created when
 * missing and {@code ledger.idempotency.dynamodb.create-table} allows it (on-demand capacity, partition key
 * {@code id}), its TTL switched on for {@code expires_at}. A DynamoDB that cannot be reached at start is
 * logged and not waited for: requests go on through Postgres (or 503 failing closed), and readiness says so.
 */
@ApplicationScoped
public class DynamoDbTable {
    private static final Logger LOG = Logger.getLogger(DynamoDbTable.class);
    private static final Duration BOUND = Duration.ofSeconds(20);

    private final DynamoDbCalls calls;
    private final LedgerConfig.Idempotency.Dynamodb settings;

    public DynamoDbTable(DynamoDbCalls calls, LedgerConfig config) {
        this.calls = calls;
        this.settings = config.idempotency().dynamodb();
    }

    /** Makes sure the table exists, when allowed; blocks up to 20 s (called at start, never on an event loop). */
    public void prepare() {
        DynamoDbAsyncClient client = calls.client();
        String table = settings.table();
        try {
            try {
                client.describeTable(d -> d.tableName(table)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
                LOG.infof("DynamoDB table %s found", table);
                return;
            } catch (java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof ResourceNotFoundException) || !settings.createTable()) {
                    throw e;
                }
            }
            try {
                client.createTable(c -> c.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                                .attributeDefinitions(AttributeDefinition.builder().attributeName(DynamoDbIdempotencyStore.ID)
                                        .attributeType(ScalarAttributeType.S).build())
                                .keySchema(KeySchemaElement.builder().attributeName(DynamoDbIdempotencyStore.ID)
                                        .keyType(KeyType.HASH).build()))
                        .get(BOUND.toSeconds(), TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof ResourceInUseException)) { // another instance created it meanwhile
                    throw e;
                }
            }
            long end = System.nanoTime() + BOUND.toNanos();
            while (client.describeTable(d -> d.tableName(table)).get(BOUND.toSeconds(), TimeUnit.SECONDS)
                    .table().tableStatus() != TableStatus.ACTIVE && System.nanoTime() < end) {
                Thread.sleep(100);
            }
            try {
                client.updateTimeToLive(t -> t.tableName(table).timeToLiveSpecification(ttl -> ttl
                        .attributeName(DynamoDbIdempotencyStore.TTL).enabled(true))).get(BOUND.toSeconds(), TimeUnit.SECONDS);
                LOG.infof("DynamoDB table %s created, TTL on %s", table, DynamoDbIdempotencyStore.TTL);
            } catch (java.util.concurrent.ExecutionException e) {
                // dynalite has no TTL API: reads ignore expired items anyway
                LOG.infof("DynamoDB table %s created; its TTL could not be switched on (%s): switch it on for %s",
                        table, e.getCause().toString(), DynamoDbIdempotencyStore.TTL);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            Throwable cause = e.getCause() instanceof CompletionException c ? c.getCause() : e.getCause();
            LOG.warnf("DynamoDB table %s not ready at start (%s); keys go to Postgres until DynamoDB answers",
                    table, cause == null ? e.toString() : cause.toString());
        }
    }
}
