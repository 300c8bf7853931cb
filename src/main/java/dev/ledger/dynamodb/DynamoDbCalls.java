package dev.ledger.dynamodb;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Breakers;
import dev.ledger.dependency.CallerContext;
import dev.ledger.dependency.GuardedCalls;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Tracer;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.client.config.ClientAsyncConfiguration;
import software.amazon.awssdk.core.client.config.SdkAdvancedAsyncClientOption;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.http.nio.netty.SdkEventLoopGroup;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClientBuilder;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The one way the store reaches DynamoDB, as {@code RedisCalls} is for Redis: the AWS SDK's asynchronous
 * client on its own small Netty event loop group, each call through the breaker {@code dynamodb}, bounded by
 * {@code ledger.fast-path.timeout} and timed and traced ({@link GuardedCalls}, as every store's calls are);
 * while the breaker is open a call fails at once ({@link Breakers#refused}) and sends nothing, except a call
 * that settles a key ({@link #settle}). The SDK completes its futures on its own threads (its completion
 * executor is set to run there, with no further pool); the result is handed back to the caller's Vert.x
 * context ({@link CallerContext}), where the rest of the request runs, as the Redis client's replies are.
 * Nothing blocks a Vert.x event loop.
 *
 * <p>Region, credentials and endpoint are the SDK's standard settings ({@code AWS_REGION}, the default
 * credentials chain, {@code AWS_ENDPOINT_URL_DYNAMODB}); {@code ledger.idempotency.dynamodb.endpoint}
 * overrides the endpoint. Nothing is created until the store is first used: with the Redis store this
 * bean is never made.
 */
@ApplicationScoped
public class DynamoDbCalls {
    /** A DynamoDB call's bound while {@code ledger.fast-path.timeout} is unset: a call over HTTPS to another host. */
    static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(500);
    /** The store's call a traced DynamoDB request made ({@link dev.ledger.tracing.ClientSpans}): reserve, complete, release, state. */
    private static final AttributeKey<String> CALL = AttributeKey.stringKey("ledger.store.call");
    private final DynamoDbAsyncClient client;
    private final CircuitBreaker breaker;
    private final GuardedCalls calls;

    public DynamoDbCalls(LedgerConfig config, Breakers breakers, MeterRegistry registry, Tracer tracer) {
        Duration timeout = config.fastPath().timeout().orElse(DEFAULT_TIMEOUT);
        this.calls = new GuardedCalls("dynamodb", "DynamoDB", timeout, CALL, registry, tracer);
        this.breaker = breakers.create("dynamodb", Breakers.Policy.of(config.fastPath().breaker()),
                "idempotency keys go to Postgres directly (or 503 failing closed)", state -> {
                });
        DynamoDbAsyncClientBuilder builder = DynamoDbAsyncClient.builder()
                .httpClientBuilder(NettyNioAsyncHttpClient.builder()
                        .eventLoopGroup(SdkEventLoopGroup.builder().numberOfThreads(2).build())
                        .maxConcurrency(256)
                        .connectionTimeout(timeout))
                .asyncConfiguration(ClientAsyncConfiguration.builder()
                        // complete on the SDK's I/O thread, then hop once to the caller's context (below)
                        .advancedOption(SdkAdvancedAsyncClientOption.FUTURE_COMPLETION_EXECUTOR, Runnable::run)
                        .build())
                // the breaker and the engine decide; an SDK retry would outlive the deadline anyway
                .overrideConfiguration(override -> override.retryStrategy(AwsRetryStrategy.doNotRetry()));
        config.idempotency().dynamodb().endpoint().ifPresent(builder::endpointOverride);
        this.client = builder.build();
    }

    /** The client, for calls outside the request path (table creation at start, readiness). */
    DynamoDbAsyncClient client() {
        return client;
    }

    /**
     * Sends {@code call} unless the breaker is open; its result on the caller's Vert.x context. {@code name}
     * (reserve, complete, release, state) and {@code operation} (DynamoDB's: PutItem, ...) name it in
     * {@code ledger_dependency_calls_seconds} and in traces.
     */
    <T> Uni<T> run(String name, String operation, Function<DynamoDbAsyncClient, CompletableFuture<T>> call) {
        return call(false, name, operation, call);
    }

    /** A call that settles a key a request holds: sent even while the breaker is open, as {@code RedisCalls#settle}. */
    <T> Uni<T> settle(String name, String operation, Function<DynamoDbAsyncClient, CompletableFuture<T>> call) {
        return call(true, name, operation, call);
    }

    private <T> Uni<T> call(boolean evenIfOpen, String name, String operation, Function<DynamoDbAsyncClient, CompletableFuture<T>> call) {
        return calls.call(breaker, evenIfOpen, name, operation, name, "dynamodb",
                () -> CallerContext.within(Vertx.currentContext(), call.apply(client)));
    }

    @PreDestroy
    void close() {
        client.close();
    }
}
