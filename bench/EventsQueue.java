import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;

import java.util.Map;

/**
 * The benchmark's consumer-side queue for events (bench/run.sh): a durable queue bound to the
 * exchange ledger.events with '#', so that RabbitMQ persists every event as it would for a real
 * consumer; capped (oldest dropped) so that the run cannot fill the disk.
 * Run with the application's own client jar: java -cp 'target/quarkus-app/lib/main/*' bench/EventsQueue.java
 * declare|count|delete VHOST QUEUE (RabbitMQ on 127.0.0.1:5672, guest).
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
                            Map.of("x-max-length", 200_000, "x-overflow", "drop-head"));
                    channel.queueBind(args[2], "ledger.events", "#");
                }
                case "count" -> System.out.println(channel.queueDeclarePassive(args[2]).getMessageCount());
                case "delete" -> channel.queueDelete(args[2]);
                default -> throw new IllegalArgumentException(args[0]);
            }
        }
    }
}
