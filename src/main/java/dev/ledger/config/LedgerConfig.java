package dev.ledger.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The service's own settings, under the {@code ledger.} prefix (environment: {@code LEDGER_...}). */
@ConfigMapping(prefix = "ledger")
public interface LedgerConfig {

    Idempotency idempotency();

    Request request();

    FastPath fastPath();

    Database database();

    Messaging messaging();

    WarmUp warmUp();

    Readiness readiness();

    /**
     * Clients on other PostgreSQL primaries than {@code quarkus.datasource.*} (the shard {@code default}, which holds
     * every client no shard names), by shard name (dev.ledger.shard; docs/configuration.md, "Shards"). None: one
     * primary, as ever.
     */
    Map<String, Shard> shards();

    /** Moving clients between shards (dev.ledger.shard.ClientMoves; docs/operations.md, "Moving a client to another shard"). */
    Moves moves();

    interface Moves {
        /**
         * How often an instance reads where moves put clients (the table {@code client_placements} on the shard
         * {@code default}); an instance that meets a client's fence on its old shard reads it at once too.
         */
        @WithDefault("1s")
        Duration refresh();

        /**
         * How long a move waits for a lock on the client's old shard (its statements in flight when the fence goes up,
         * the relay publishing its events) before it gives up, leaving the client where it was (503: send it again).
         */
        @WithDefault("2s")
        Duration lockWait();

        /**
         * The longest a move may pause the client: from its fence to the copy's commit on the target. A copy that
         * would take longer (a client with very many rows, a target slow to answer) is rolled back there, the fence
         * taken down, and the client stays where it was, served as before.
         */
        @WithDefault("5s")
        Duration maxPause();

        /** The clients (by their API keys) allowed to move clients: {@code POST /admin/client-moves}. None: nobody. */
        Optional<List<String>> operators();
    }

    /** One PostgreSQL primary and the clients it holds: a complete database with the same schema, migrated at start. */
    interface Shard {
        /** The shard's reactive URL, {@code postgresql://host:5432/db}. */
        String url();

        /** The user the shard is reached as; none: the default shard's ({@code quarkus.datasource.username}). */
        Optional<String> username();

        /** That user's password; none: the default shard's. */
        Optional<String> password();

        /** The client ids whose data live on this shard, comma-separated. */
        Optional<List<String>> clients();
    }

    /** The readiness checks of the dependencies (docs/operations.md, "Readiness"). */
    interface Readiness {
        /**
         * Longest a readiness check waits for its dependency's answer (PostgreSQL, Redis, DynamoDB); past it the
         * check reports the dependency DOWN, saying it gave no answer. Shorter than a balancer's probe timeout,
         * so that a dependency cut away by a partition takes the instance out at the first probe.
         */
        @WithDefault("1s")
        Duration timeout();
    }

    Transfers transfers();

    /** Transfers and holds (dev.ledger.transfer; docs/operations.md, "Expired holds"). */
    interface Transfers {
        Expiry expiry();

        /**
         * The job that releases holds past their expiry and writes their {@code transfer.expired} events, on every
         * instance (several share the work: each skips the holds another holds). A hold is expired from its
         * {@code expiresAt} whatever this job does; it only makes the release and its events follow soon.
         */
        interface Expiry {
            /** How often the job runs. */
            @WithDefault("1s")
            String every();

            /** Holds one transaction releases at most. */
            @WithDefault("100")
            int batchSize();

            /** Batches one run releases at most; the rest waits for the next run. */
            @WithDefault("20")
            int maxBatches();
        }
    }

    /** What an instance does at start before it reports ready (dev.ledger.warmup.WarmUp). */
    interface WarmUp {
        /**
         * How many times each read path runs at start, against ids that name nothing, after every
         * connection of the PostgreSQL pool was opened; 0: no warm-up, ready as soon as the dependencies are.
         */
        @WithDefault("100")
        int rounds();

        /** Longest the warm-up may take; readiness then waits for the dependencies' checks alone. */
        @WithDefault("20s")
        Duration timeout();
    }

    /** Commands over the message brokers (dev.ledger.commands; docs/api.md "Payment commands over RabbitMQ", "... over Kafka"). */
    interface Messaging {
        Rabbitmq rabbitmq();

        /**
         * Deliveries of one command after which a failure that is not a dependency's (a bug) dead-letters
         * it with {@code internal-error}, instead of requeueing it. Unavailable dependencies never count.
         */
        @WithDefault("5")
        int maxDeliveries();

        /**
         * Formerly both brokers' bound on the commands worked on at once; now {@code ledger.messaging.rabbitmq.prefetch}
         * and {@code ledger.messaging.kafka.max-held}, each of which still reads this while it is unset
         * ({@link RenamedSettings}). Declared here so that a configuration that still sets it starts.
         */
        @Deprecated
        Optional<Integer> prefetch();

        /** The back-off before a command that met an unavailable dependency is given back to the broker. */
        @WithDefault("1s")
        Duration retryDelay();

        /**
         * Longest the broker may take to confirm a command's outcome message or dead letter; past it
         * the command is given back to the broker as if the publish had failed, and its redelivery
         * publishes the recorded outcome again, as a replay. Bounds every command's wait on the
         * broker (a publisher that lost its connection may never answer, and a broker short of memory
         * or disk blocks every publisher). Longer than the senders' own retries of a failed publish
         * ({@code retry-on-fail-attempts} 6 at {@code retry-on-fail-interval} 5 s).
         */
        @WithDefault("60s")
        Duration confirmTimeout();

        interface Rabbitmq {
            /** Consume payment commands from RabbitMQ and publish their outcomes; readiness then includes the broker. */
            @WithDefault("false")
            boolean enabled();

            /**
             * The most commands this instance works on at once over RabbitMQ: the channel's prefetch
             * (unacknowledged deliveries), and so the bound of concurrent commands, waiting ones included. 256
             * rather than 64: a command cost the service 13 % less CPU, and 13 % more ran a second
             * (docs/performance.md, "RabbitMQ: a prefetch of 256"). Formerly {@code ledger.messaging.prefetch}.
             */
            @WithDefault("256")
            int prefetch();

            /**
             * The quorum queue {@code ledger.commands}' delivery limit ({@code x-delivery-limit}), explicit so that the
             * broker's version does not choose one: RabbitMQ 4 gives quorum queues 20 by default, past which the broker
             * itself dead-letters a command without {@code x-ledger-problem}, and an outage of Redis or PostgreSQL
             * redelivers a command about once per {@code ledger.messaging.retry-delay}. A million deliveries is more
             * than 11 days of outage at 1 s (docs/api.md, "RabbitMQ 4"). Formerly the connector's
             * {@code mp.messaging.incoming.commands.queue.x-delivery-limit}. A queue that exists keeps the limit it was
             * declared with: the broker refuses a declaration that differs. 0 declares none, for a queue an earlier
             * version declared without one (docs/operations.md, "Upgrading the commands queue").
             */
            @WithDefault("1000000")
            long deliveryLimit();

            /**
             * How long consumption pauses once most recent commands met an unavailable dependency (the
             * breaker {@code commands} open); then one command tries again. Formerly {@code ledger.messaging.pause}.
             */
            @WithDefault("5s")
            Duration pause();

            Breaker breaker();

            /**
             * The circuit breaker {@code commands}, which pauses RabbitMQ's consumption ({@code pause} is its delay):
             * over the last {@code window} commands, once {@code minimum-calls} were handled, a share of
             * {@code failure-ratio} that met an unavailable dependency opens it. Formerly {@code ledger.messaging.breaker.*}.
             */
            interface Breaker {
                /** Commands in the rolling window that decides whether to pause. */
                @WithDefault("10")
                int window();

                /** Commands handled before the window decides anything. */
                @WithDefault("5")
                int minimumCalls();

                /** Share of those commands that met an unavailable dependency which pauses consumption. */
                @WithDefault("0.5")
                double failureRatio();
            }
        }

        Kafka kafka();

        /** Payment commands over Kafka (dev.ledger.commands.kafka; docs/api.md "Payment commands over Kafka"). */
        interface Kafka {
            /**
             * Consume payment commands from the topics {@code ledger.commands.<client-id>} and publish their
             * outcomes to {@code ledger.outcomes.<client-id>}; readiness then includes the broker
             * ({@code kafka.bootstrap.servers}).
             */
            @WithDefault("false")
            boolean enabled();

            /**
             * The longest back-off between two attempts of a command retried in place (its dependencies
             * unavailable, or its original still in flight); the first is {@code ledger.messaging.retry-delay},
             * doubled at each attempt up to this.
             */
            @WithDefault("16s")
            Duration maxRetryDelay();

            /**
             * The most records this instance holds (fetched, not settled yet) of the clients of each PostgreSQL
             * shard, and one poll more ({@code max.poll.records}): past it the partitions of those clients' topics
             * pause until some are settled. Formerly {@code ledger.messaging.prefetch}.
             */
            @WithDefault("64")
            int maxHeld();
        }
    }

    Events events();

    /** Events out: the transactional outbox, its relay and the brokers it publishes to (docs/design.md, "Events out"). */
    interface Events {
        Rabbitmq rabbitmq();

        Kafka kafka();

        /** How long a published event is kept in PostgreSQL before the purge removes it. */
        @WithDefault("7d")
        Duration retention();

        Purge purge();

        Relay relay();

        /** RabbitMQ as the events' broker; the connection uses the standard {@code rabbitmq-*} settings. */
        interface Rabbitmq {
            /**
             * Whether events are written (in the same transaction as each applied transaction and opened
             * account) and published to RabbitMQ. false: the request path writes none, and no relay runs.
             */
            @WithDefault("false")
            boolean enabled();

            /** The topic exchange events are published to (declared by the service, durable). */
            @WithDefault("ledger.events")
            String exchange();

            /**
             * The durable queue the service declares (when missing) and binds to the exchange with {@code #},
             * so that events wait there for a consumer that binds later; empty: none, and an event published
             * while no queue is bound is dropped by RabbitMQ. Its default, {@code ledger.events}, is set in
             * application.properties, where an empty value can override it.
             */
            Optional<String> queue();

            /** Longest the broker may take to confirm a batch; past it the batch is published again later. */
            @WithDefault("10s")
            Duration confirmTimeout();
        }

        /**
         * Kafka as the events' broker (beside RabbitMQ or instead of it; each gets every event, tracked
         * on its own); the connection uses Quarkus' {@code kafka.*} settings ({@code kafka.bootstrap.servers}).
         */
        interface Kafka {
            /**
             * Whether events are written and published to Kafka. With RabbitMQ's switch too: events are
             * written while either is on, and each broker's relay publishes every event written while it was on.
             */
            @WithDefault("false")
            boolean enabled();

            /** The topic events are published to, keyed by account id; created at start when missing (the broker's default partitions). */
            @WithDefault("ledger.events")
            String topic();

            /**
             * Longest the broker may take to acknowledge a batch (all in-sync replicas); past it the batch
             * is published again later. Also the producer's delivery timeout.
             */
            @WithDefault("10s")
            Duration confirmTimeout();
        }

        /** The relay every instance runs, one per broker switched on. */
        interface Relay {
            /** Most events one round claims, publishes and marks published, in one PostgreSQL transaction. */
            @WithDefault("500")
            int batchSize();

            /**
             * How often the relay looks for events it was not woken for (an instance wakes only its own
             * relay, right after its commit): events of an instance that died or cannot reach the broker.
             * Also the longest wait between attempts while the broker or PostgreSQL is down.
             */
            @WithDefault("1s")
            Duration pollInterval();

        }
    }

    interface Database {
        /**
         * Longest a Postgres call may take; past it the request answers 503 and the key is released.
         * With the store's timeouts (a reserve and a complete), it bounds how long a POST can take.
         */
        @WithDefault("1200ms")
        Duration timeout();

        /**
         * Longest the network may leave a new connection to PostgreSQL unanswered, or a statement sent on a
         * connection unacknowledged, before the connection is given up (its connect timeout, and TCP_USER_TIMEOUT
         * where the native transport runs): behind a partition that loses packets silently the pool then holds
         * no connection that waits for a retransmission after the heal, and serves again within about this long.
         */
        @WithDefault("2s")
        Duration networkTimeout();
    }

    /**
     * The API keys, as comma-separated {@code client-id:sha256hex} entries: the client (tenant) a
     * key authenticates as, and the lower-case hex SHA-256 of the key itself (never the key). A
     * client may have several entries, so that a key can be rotated without downtime. Required
     * while {@code ledger.auth.enabled} is true: the application refuses to start without it.
     */
    Optional<String> apiKeys();

    Auth auth();

    interface Auth {
        /**
         * Whether every request outside {@code /q/} must carry a configured API key. false: no key
         * is asked for or checked, and every request acts as the one client {@code default}.
         */
        @WithDefault("true")
        boolean enabled();
    }

    interface Idempotency {
        /**
         * How long an in-flight reservation blocks its key before another request may take it over.
         * Must exceed the longest a request can take (its timeouts), else a slow request's duplicate
         * would run too; Postgres still applies the key once, so the cost is only wasted work.
         */
        @WithDefault("30s")
        Duration lease();

        /** How long a completed key keeps replaying its recorded answer (at least 24 h by contract). */
        @WithDefault("24h")
        Duration retention();

        /**
         * The longest a request may wait for an in-flight original with its key: the cap of an HTTP
         * client's {@code Prefer: wait=N}, and how long a broker command waits before it is requeued.
         */
        @WithDefault("10s")
        Duration maxWait();

        /**
         * While requests wait, how often one look per waited-on key checks whether it settled, for a
         * wake-up that was missed (a lease that expired publishes nothing).
         */
        @WithDefault("1s")
        Duration waitRecheck();

        Purge purge();

        /**
         * The fast path's store: {@code redis} (the {@code quarkus.redis.*} servers) or {@code dynamodb} (AWS
         * DynamoDB, {@code ledger.idempotency.dynamodb.*}); while it is {@code dynamodb}, nothing reads or
         * writes Redis. Either way {@code ledger.fast-path.*} decides what a request does when the store cannot
         * answer (docs/dynamodb.md).
         */
        @WithDefault("redis")
        Store store();

        enum Store {
            REDIS, DYNAMODB
        }

        Dynamodb dynamodb();

        /**
         * The DynamoDB store (dev.ledger.dynamodb). Region, credentials and endpoint come from the AWS SDK's
         * standard settings ({@code AWS_REGION}, the default credentials chain, {@code AWS_ENDPOINT_URL_DYNAMODB}).
         */
        interface Dynamodb {
            /** The table: partition key {@code id} (string), TTL attribute {@code expires_at}. */
            @WithDefault("ledger-idempotency")
            String table();

            /** Create the table (on-demand capacity) at start when it is missing, and switch its TTL on. */
            @WithDefault("true")
            boolean createTable();

            /**
             * Another endpoint than the SDK's own choice ({@code AWS_ENDPOINT_URL_DYNAMODB} does the same from the
             * environment; this wins over it): for an emulator, or a proxy in tests.
             */
            Optional<java.net.URI> endpoint();
        }
    }

    /** Removal from Postgres in bounded batches, by a scheduled job: expired idempotency records, or old published events. */
    interface Purge {
        /** How often the job runs. */
        @WithDefault("1m")
        String every();

        /** Rows one DELETE removes at most. */
        @WithDefault("1000")
        int batchSize();

        /** Batches one run deletes at most; the rest waits for the next run. */
        @WithDefault("100")
        int maxBatches();
    }

    /**
     * The fast path's store, whichever {@code ledger.idempotency.store} chose (dev.ledger.fastpath): what a request
     * does when it cannot answer, how long a call may take, and the breaker that stops calling it while it is
     * away. Formerly {@code ledger.redis.*} (and {@code ledger.idempotency.dynamodb.timeout}), which are still read
     * ({@link RenamedSettings}).
     */
    interface FastPath {
        /**
         * What a POST does when the store cannot answer (down, slow, breaker open): {@code false}
         * (default) goes on through Postgres alone, which still applies every key at most once;
         * {@code true} answers 503 {@code service-unavailable} instead.
         */
        @WithDefault("false")
        boolean failClosed();

        /**
         * Longest a call to the store may take before it counts as failed (and the request goes on without it,
         * or answers 503 failing closed). Unset: the store's own default, 300 ms for Redis, 500 ms for DynamoDB
         * (a call over HTTPS to another host).
         */
        Optional<Duration> timeout();

        Breaker breaker();

        /**
         * The store's circuit breakers ({@code redis}, one per Redis node; {@code dynamodb}): open when calls
         * fail, so an absent store costs nothing per request.
         */
        interface Breaker {
            /** Calls in the rolling window that decides whether to open. */
            @WithDefault("10")
            int requestVolumeThreshold();

            /** Share of failed calls in the window that opens the breaker. */
            @WithDefault("0.5")
            double failureRatio();

            /** How long the breaker stays open before a trial call. */
            @WithDefault("2s")
            Duration delay();
        }
    }

    interface Request {
        /** Largest POST body accepted; larger bodies get 413 {@code payload-too-large}. */
        @WithDefault("65536")
        int maxBodyBytes();

        /**
         * Longest request target (path and query) accepted; longer gets 414 {@code uri-too-long}. Keep it
         * below {@code quarkus.http.limits.max-initial-line-length}, past which the HTTP codec refuses with no body.
         */
        @WithDefault("4096")
        int maxUriLength();

        /**
         * Largest header section accepted (each field line counted as {@code name: value} and CRLF); larger
         * gets 431 {@code headers-too-large}. Keep it below {@code quarkus.http.limits.max-header-size}, past
         * which the HTTP codec refuses with no body.
         */
        @WithDefault("16384")
        int maxHeaderBytes();
    }
}
