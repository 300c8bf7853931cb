package dev.ledger.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.LongString;
import dev.ledger.testing.PaymentLoad.Answer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The API's POSTs as the brokers' commands, for a load that sends its requests through any door
 * ({@link TransferStorm.Door}): each request becomes the command that stands for it (API.md, the payment and
 * transfer commands), sent as client {@code dev} over RabbitMQ (its routing key) or Kafka (its
 * {@code ledger-command} header, keyed by the account it stays in order with), with a correlation of its own; its
 * outcome, taken from the client's reply queue or outcome topic by that correlation, is its answer, as the HTTP
 * answer would be. Every outcome is checked against the AsyncAPI document as it is taken.
 */
public final class CommandDoors implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern TRANSFER_CHANGE = Pattern.compile("^/transfers/([^/]+)/(post|void|reversals)$");
    private static final Pattern TRANSACTIONS = Pattern.compile("^/accounts/([^/]+)/transactions$");
    private static final Map<String, String> CHANGES = Map.of("post", "transfers.post", "void", "transfers.void",
            "reversals", "transfers.reverse");
    /** How long a command may take to be answered before the load counts it unanswered and sends it again. */
    private static final Duration BOUND = Duration.ofSeconds(60);

    private final Map<String, CompletableFuture<Answer>> waiting = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> sentBy = new ConcurrentHashMap<>();
    private final Connection rabbitmq;
    private final Channel channel;
    private final String replies;
    private final KafkaProducer<byte[], byte[]> producer = KafkaBroker.producer();
    private final KafkaConsumer<byte[], byte[]> outcomes;
    private final Thread kafkaReader;
    private volatile boolean open = true;

    public CommandDoors() throws Exception {
        BrokerUsers.ensure("dev");
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(Integer.parseInt(System.getenv().getOrDefault("RABBITMQ_PORT", "5672")));
        factory.setVirtualHost(Broker.virtualHost());
        factory.setUsername("dev");
        factory.setPassword(BrokerUsers.PASSWORD);
        rabbitmq = factory.newConnection("ledger-tests-command-doors");
        channel = rabbitmq.createChannel();
        channel.confirmSelect();
        replies = channel.queueDeclare("", false, true, true, null).getQueue();
        channel.basicConsume(replies, true, (tag, delivery) -> {
            AsyncApiContract.rabbitmq("rabbitmqOutcome", delivery.getProperties(), delivery.getBody());
            Object replayed = header(delivery.getProperties(), "idempotent-replayed");
            answer(delivery.getProperties().getCorrelationId(), new Answer(((Number) header(delivery.getProperties(), "ledger-status")).intValue(),
                    new String(delivery.getBody(), StandardCharsets.UTF_8), Boolean.TRUE.equals(replayed) ? "true" : null, null));
        }, tag -> {
        });
        outcomes = KafkaBroker.consumer("ledger.outcomes.dev");
        kafkaReader = new Thread(this::readKafkaOutcomes, "command-doors-kafka");
        kafkaReader.setDaemon(true);
        kafkaReader.start();
    }

    /** Over RabbitMQ. */
    public TransferStorm.Door rabbitmq() {
        return (path, key, body) -> send(path, body, (command, correlation) -> {
            AMQP.BasicProperties properties = Broker.command(key, "dev", replies).correlationId(correlation).build();
            synchronized (channel) {
                channel.basicPublish(Broker.COMMANDS, command.name(), properties, command.body().getBytes(StandardCharsets.UTF_8));
                channel.waitForConfirmsOrDie(10_000);
            }
        });
    }

    /** Over Kafka. */
    public TransferStorm.Door kafka() {
        return (path, key, body) -> send(path, body, (command, correlation) -> producer.send(KafkaBroker.command("dev",
                command.recordKey(), command.body(), "idempotency-key", key, "ledger-command", command.name(),
                "correlation-id", correlation)).get(20, TimeUnit.SECONDS));
    }

    /** Each request through HTTP ({@code http}), RabbitMQ or Kafka, chosen at random each time; counted by door. */
    public TransferStorm.Door anyOf(TransferStorm.Door http) {
        Map<String, TransferStorm.Door> doors = Map.of("http", http, "rabbitmq", rabbitmq(), "kafka", kafka());
        List<String> names = List.copyOf(new TreeMap<>(doors).keySet());
        return (path, key, body) -> {
            String door = names.get(ThreadLocalRandom.current().nextInt(names.size()));
            sentBy.computeIfAbsent(door, ignored -> new LongAdder()).increment();
            return doors.get(door).post(path, key, body);
        };
    }

    /** What {@link #anyOf} sent through each door (retries included). */
    public Map<String, Long> sentBy() {
        Map<String, Long> counts = new TreeMap<>();
        sentBy.forEach((door, count) -> counts.put(door, count.sum()));
        return counts;
    }

    private record Command(String name, String body, String recordKey) {
    }

    @FunctionalInterface
    private interface Sender {
        void send(Command command, String correlation) throws Exception;
    }

    private Answer send(String path, String body, Sender sender) {
        String correlation = "doors-" + UUID.randomUUID();
        CompletableFuture<Answer> answer = new CompletableFuture<>();
        waiting.put(correlation, answer);
        try {
            sender.send(command(path, body), correlation);
            return answer.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Answer.NONE;
        } catch (Exception e) {
            return Answer.NONE;
        } finally {
            waiting.remove(correlation);
        }
    }

    /** The command the POST of {@code path} with {@code body} stands for. */
    static Command command(String path, String body) throws Exception {
        ObjectNode json = (ObjectNode) JSON.readTree(body);
        if (path.equals("/transfers")) {
            return new Command("transfers.create", body, json.path("debitAccountId").asText());
        }
        Matcher change = TRANSFER_CHANGE.matcher(path);
        if (change.matches()) {
            ObjectNode command = JSON.createObjectNode().put("transferId", change.group(1));
            command.setAll(json);
            return new Command(CHANGES.get(change.group(2)), JSON.writeValueAsString(command), change.group(1));
        }
        Matcher transactions = TRANSACTIONS.matcher(path);
        if (transactions.matches()) {
            ObjectNode command = JSON.createObjectNode().put("accountId", transactions.group(1));
            command.setAll(json);
            return new Command("transactions.post", JSON.writeValueAsString(command), transactions.group(1));
        }
        throw new IllegalArgumentException("No command stands for POST " + path);
    }

    private void readKafkaOutcomes() {
        while (open) {
            for (ConsumerRecord<byte[], byte[]> record : outcomes.poll(Duration.ofMillis(100))) {
                Map<String, String> headers = new HashMap<>();
                for (Header header : record.headers()) {
                    headers.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
                }
                String key = record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8);
                AsyncApiContract.kafka("kafkaOutcome", key, headers, record.value());
                answer(headers.get("correlation-id"), new Answer(Integer.parseInt(headers.get("ledger-status")),
                        new String(record.value(), StandardCharsets.UTF_8), headers.get("idempotent-replayed"), null));
            }
        }
    }

    private void answer(String correlation, Answer answer) {
        CompletableFuture<Answer> waiter = correlation == null ? null : waiting.get(correlation);
        if (waiter != null) {
            waiter.complete(answer);
        }
    }

    private static Object header(AMQP.BasicProperties properties, String name) {
        Object value = properties.getHeaders() == null ? null : properties.getHeaders().get(name);
        return value instanceof LongString ? value.toString() : value;
    }

    @Override
    public void close() throws Exception {
        open = false;
        kafkaReader.join(5_000);
        outcomes.close(Duration.ofSeconds(5));
        producer.close(Duration.ofSeconds(5));
        rabbitmq.close();
    }
}
