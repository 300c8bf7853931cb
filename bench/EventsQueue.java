import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;

import java.util.Map;

/**
 * The benchmark's consumer of events (bench/run.sh): a durable queue bound to the exchange
 * ledger.events with '#', so that RabbitMQ persists every event as it would for a real consumer, and
 * "consume", which takes them as they arrive (until killed), as a real consumer would: a queue left
 * to fill up makes RabbitMQ, not the service, the bottleneck. A cap far above a run's events keeps a
 * stalled consumer from filling the disk.
 * Run with the application's own client jar: java -cp 'target/quarkus-app/lib/main/*' bench/EventsQueue.java
 * declare|consume|count|delete VHOST QUEUE (RabbitMQ on 127.0.0.1:5672, guest).
 */
public class EventsQueue {
    public static void main(String[] args) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setVirtualHost(args[1]);
        try (Connection connection = factory.newConnection("ledger bench: events queue");
             Channel channel = connection.createChannel()) {
            switch (args[0]) {
                case "declare" -> {
                    channel.exchangeDeclare("ledger.events", BuiltinExchangeType.TOPIC, true);
                    channel.queueDeclare(args[2], true, false, false,
                            Map.of("x-max-length", 2_000_000));
                    channel.queueBind(args[2], "ledger.events", "#");
                }
                case "consume" -> {
                    channel.basicQos(2000);
                    channel.basicConsume(args[2], true, (tag, message) -> {
                    }, tag -> {
                    });
                    Thread.currentThread().join(); // until killed
                }
                case "count" -> System.out.println(channel.queueDeclarePassive(args[2]).getMessageCount());
                case "delete" -> channel.queueDelete(args[2]);
                default -> throw new IllegalArgumentException(args[0]);
            }
        }
    }
}
