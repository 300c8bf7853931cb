package dev.ledger.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * DynamoDB for the tests: the dynalite that .ci/services started ({@code AWS_ENDPOINT_URL_DYNAMODB}, from the
 * pom's {@code tests.dynalite.port}), behind a {@link TcpProxy} the tests can break, with a table of this
 * run's own (created by the service at start), and a client of the tests' own that reaches dynalite directly.
 */
public class DynamoDbLab implements QuarkusTestResourceLifecycleManager {
    private static TcpProxy proxy;
    private static String table;
    private static DynamoDbAsyncClient client;

    public static TcpProxy proxy() {
        return proxy;
    }

    @Override
    public Map<String, String> start() {
        try {
            URI endpoint = endpoint();
            proxy = new TcpProxy(endpoint.getPort());
            table = "ledger-idempotency-test-" + UUID.randomUUID().toString().substring(0, 8);
            client = DynamoDbAsyncClient.builder().endpointOverride(endpoint).build();
            return Map.of("ledger.idempotency.store", "dynamodb",
                    "ledger.idempotency.dynamodb.table", table,
                    "ledger.idempotency.dynamodb.endpoint", "http://127.0.0.1:" + proxy.port());
        } catch (Exception e) {
            throw new IllegalStateException("Cannot start the DynamoDB lab", e);
        }
    }

    private static URI endpoint() {
        String endpoint = System.getenv("AWS_ENDPOINT_URL_DYNAMODB");
        if (endpoint == null) {
            throw new IllegalStateException("AWS_ENDPOINT_URL_DYNAMODB is not set (the pom's local-services profile sets it)");
        }
        return URI.create(endpoint);
    }

    @Override
    public void stop() {
        try {
            client.deleteTable(delete -> delete.tableName(table)).join();
        } catch (Exception ignored) {
            // dynalite keeps tables in memory anyway
        }
        client.close();
        try {
            proxy.close();
        } catch (Exception ignored) {
            // the JVM is ending
        }
    }

    /** The store in DynamoDB, through the tests' own client. */
    public static FastPathStore store() {
        return new FastPathStore() {
            @Override
            public void flush() {
                for (Map<String, AttributeValue> item : items()) {
                    client.deleteItem(delete -> delete.tableName(table).key(Map.of("id", item.get("id")))).join();
                }
            }

            @Override
            public void holdInFlight(String keyId, String fingerprintHex, String owner, long millis) {
                long until = System.currentTimeMillis() + millis;
                client.putItem(put -> put.tableName(table).item(Map.of("id", AttributeValue.fromS(keyId),
                        "state", AttributeValue.fromS("PROCESSING"), "fp", AttributeValue.fromS(fingerprintHex),
                        "owner", AttributeValue.fromS(owner), "until", AttributeValue.fromN(Long.toString(until)),
                        "expires_at", AttributeValue.fromN(Long.toString(until / 1000 + 1))))).join();
            }

            @Override
            public void forget(String keyId) {
                client.deleteItem(delete -> delete.tableName(table).key(Map.of("id", AttributeValue.fromS(keyId)))).join();
            }

            @Override
            public List<String> names() {
                return items().stream().map(item -> item.get("id").s()).toList();
            }

            @Override
            public List<String> states() {
                return items().stream().map(item -> item.get("state").s()).toList();
            }

            @Override
            public boolean isKeyId(String name) {
                return name.matches("[0-9a-f]{64}");
            }

            @Override
            public String breaker() {
                return "dynamodb";
            }

            @Override
            public String readinessName() {
                return "dynamodb";
            }
        };
    }

    /** The key's item as stored (empty when none). */
    public static Map<String, AttributeValue> item(String keyId) {
        return client.getItem(get -> get.tableName(table).key(Map.of("id", AttributeValue.fromS(keyId))).consistentRead(true))
                .join().item();
    }

    /** Ends the key's lease or retention now, leaving the item where it is: what DynamoDB's lazy TTL shows for a while. */
    public static void expire(String keyId) {
        client.updateItem(update -> update.tableName(table).key(Map.of("id", AttributeValue.fromS(keyId)))
                .updateExpression("SET #until = :past").expressionAttributeNames(Map.of("#until", "until"))
                .expressionAttributeValues(Map.of(":past", AttributeValue.fromN(Long.toString(System.currentTimeMillis() - 1)))))
                .join();
    }

    private static List<Map<String, AttributeValue>> items() {
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = client.scan(scan -> scan.tableName(table).consistentRead(true).exclusiveStartKey(from)).join();
            items.addAll(page.items());
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return items;
    }
}
