import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The broker's own limit for the commands scenario (bench/run.sh): the same message flow as the
 * service's command door without PostgreSQL and Redis. It consumes ledger.commands (the quorum
 * queue the service declares) with the service's prefetch and, for each command, publishes an
 * outcome to ledger.outcomes with a publisher confirm and acknowledges the command once the
 * confirm arrives. Run while CommandLoad publishes and waits for the outcomes; stopped by the caller.
 *
 * With ACK "multiple" (BENCH_ECHO_ACK in bench/run.sh), the commands whose outcomes a confirm settled are
 * acknowledged by one basicAck with multiple whenever they are the oldest unsettled (one acknowledgement for several,
 * as the service's connector cannot); otherwise, and by default ("single"), each by its own.
 *
 * Usage: java -cp <amqp-client...> bench/BrokerEcho.java PORT VHOST USER PASSWORD PREFETCH [ACK]
 */
public class BrokerEcho {
    private static boolean ackMultiple;

    public static void main(String[] args) throws Exception {
        ackMultiple = args.length > 5 && "multiple".equals(args[5]);
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(Integer.parseInt(args[0]));
        factory.setVirtualHost(args[1]);
        factory.setUsername(args[2]);
        factory.setPassword(args[3]);
        Connection consuming = factory.newConnection("bench-echo-consumer");
        Connection publishing = factory.newConnection("bench-echo-publisher");
        Channel in = consuming.createChannel();
        in.basicQos(Integer.parseInt(args[4]));
        Channel out = publishing.createChannel();
        out.confirmSelect();
        // the command's delivery tag awaiting the confirm of its outcome, by the outcome's publish sequence
        ConcurrentNavigableMap<Long, Long> pending = new ConcurrentSkipListMap<>();
        out.addConfirmListener((sequence, multiple) -> settle(in, pending, sequence, multiple),
                (sequence, multiple) -> settle(in, pending, sequence, multiple));
        in.basicConsume("ledger.commands", false, (tag, delivery) -> {
            synchronized (out) {
                long sequence = out.getNextPublishSeqNo();
                pending.put(sequence, delivery.getEnvelope().getDeliveryTag());
                out.basicPublish("ledger.outcomes", "transactions.201", new AMQP.BasicProperties.Builder()
                        .contentType("application/json").deliveryMode(2).correlationId(delivery.getProperties().getMessageId())
                        .headers(Map.of("ledger-status", 201, "idempotency-key", delivery.getProperties().getMessageId()))
                        .build(), delivery.getBody());
            }
        }, tag -> { });
        Thread.currentThread().join();
    }

    private static void settle(Channel in, ConcurrentNavigableMap<Long, Long> pending, long sequence, boolean multiple) {
        var confirmed = multiple ? pending.headMap(sequence, true) : pending.subMap(sequence, true, sequence, true);
        // outcomes are published in delivery order: every earlier delivery is settled when these are the oldest pending
        if (ackMultiple && !confirmed.isEmpty() && confirmed.firstKey().equals(pending.firstKey())) {
            try {
                in.basicAck(confirmed.lastEntry().getValue(), true);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            confirmed.clear();
            return;
        }
        for (Long deliveryTag : confirmed.values()) {
            try {
                in.basicAck(deliveryTag, false);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        confirmed.clear();
    }
}
