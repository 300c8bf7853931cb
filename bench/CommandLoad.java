import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DeliverCallback;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The benchmark's commands scenario (bench/run.sh): publishes COUNT payment commands, one credit
 * per command over the seeded accounts in turn, each with its own key, and times until every
 * outcome has arrived on a queue bound to ledger.outcomes. Prints one BENCH line like the wrk
 * scenarios: commands/s, the outcomes by status, and the machine's busy clock ticks over the timed
 * window (from the first publish to the last outcome: not the JVM's own start).
 *
 * Usage: java -cp <amqp-client...> bench/CommandLoad.java PORT VHOST USER PASSWORD ACCOUNTS-FILE COUNT RUN-ID SEQ-BASE
 */
public class CommandLoad {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String vhost = args[1];
        List<String> accounts = Files.readAllLines(Path.of(args[4]));
        int count = Integer.parseInt(args[5]);
        String run = args[6];
        long sequenceBase = Long.parseLong(args[7]);

        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(port);
        factory.setVirtualHost(vhost);
        factory.setUsername(args[2]);
        factory.setPassword(args[3]);
        try (Connection connection = factory.newConnection("bench-commands")) {
            Channel listen = connection.createChannel();
            String outcomes = listen.queueDeclare("", false, true, true, null).getQueue();
            listen.exchangeDeclare("ledger.outcomes", "topic", true, false, null);
            listen.queueBind(outcomes, "ledger.outcomes", "#");
            CountDownLatch all = new CountDownLatch(count);
            Map<Integer, AtomicInteger> byStatus = new ConcurrentHashMap<>();
            DeliverCallback onOutcome = (tag, delivery) -> {
                Object status = delivery.getProperties().getHeaders().get("ledger-status");
                byStatus.computeIfAbsent(((Number) status).intValue(), s -> new AtomicInteger()).incrementAndGet();
                all.countDown();
            };
            listen.basicConsume(outcomes, true, onOutcome, tag -> { });

            Channel publish = connection.createChannel();
            publish.confirmSelect();
            long startTicks = machineTicks();
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                String account = accounts.get(i % accounts.size());
                long sequence = sequenceBase + i / accounts.size();
                String body = "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"amount\":1,\"sequence\":" + sequence + "}";
                publish.basicPublish("ledger.commands", "transactions.post", new AMQP.BasicProperties.Builder()
                        .contentType("application/json").deliveryMode(2).messageId("bench-command-" + run + "-" + i)
                        .userId(args[2]).build(), body.getBytes(StandardCharsets.UTF_8));
                if (i % 500 == 499) {
                    publish.waitForConfirmsOrDie(60_000);
                }
            }
            publish.waitForConfirmsOrDie(60_000);
            boolean done = all.await(10, TimeUnit.MINUTES);
            double seconds = (System.nanoTime() - start) / 1e9;
            long ticks = machineTicks() - startTicks;
            int created = byStatus.getOrDefault(201, new AtomicInteger()).get();
            System.out.printf("BENCH commands=%d outcomes=%d rps=%.1f expected_share=%.4f seconds=%.2f statuses=%s complete=%s machine_ticks=%d%n",
                    count, count - all.getCount(), (count - all.getCount()) / seconds, created / (double) count, seconds,
                    byStatus, done, ticks);
        }
    }

    /** The whole machine's busy clock ticks so far (user, nice, system, irq, softirq), as bench/run.sh counts them. */
    private static long machineTicks() throws java.io.IOException {
        String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        return Long.parseLong(cpu[1]) + Long.parseLong(cpu[2]) + Long.parseLong(cpu[3]) + Long.parseLong(cpu[6])
                + Long.parseLong(cpu[7]);
    }
}
