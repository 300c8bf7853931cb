package dev.ledger.redis;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.vertx.mutiny.redis.client.Redis;

/**
 * One Redis server the idempotency store writes to: the only one, or a primary of a Redis Cluster.
 * Its client pools the connections to it; its breaker counts only its own calls, so that one
 * shard's outage opens only its own.
 *
 * @param address {@code host:port}
 */
public record RedisNode(String address, Redis client, CircuitBreaker breaker) {
}
