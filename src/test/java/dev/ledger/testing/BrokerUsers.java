package dev.ledger.testing;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Broker users named like the clients: RabbitMQ checks a message's {@code user_id} against the user
 * of the publishing connection, so a client publishes commands as its own broker user. Created with
 * {@code rabbitmqctl} (as root, as CI and this machine run the tests), idempotently.
 */
public final class BrokerUsers {
    public static final String PASSWORD = "ledger-tests-broker-user";

    private BrokerUsers() {
    }

    /** Makes sure broker user {@code name} exists with {@link #PASSWORD} and may use the tests' virtual host. */
    public static void ensure(String name) throws IOException, InterruptedException {
        ensure(name, null);
    }

    /** The same, on the node {@code node} (a dedicated one, virtual host {@code /}), or the machine's when null. */
    public static void ensure(String name, String node) throws IOException, InterruptedException {
        ctl(node, true, "add_user", name, PASSWORD);
        ctl(node, false, "change_password", name, PASSWORD);
        ctl(node, false, "set_permissions", "-p", node == null ? Broker.virtualHost() : "/", name, ".*", ".*", ".*");
    }

    /** {@code rabbitmqctl} on {@code node} (the machine's when null); fails unless it succeeds; answers its output. */
    public static String ctl(String node, String... args) throws IOException, InterruptedException {
        return ctl(node, false, args);
    }

    private static String ctl(String node, boolean mayExist, String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("rabbitmqctl", "-q"));
        if (node != null) {
            command.addAll(List.of("-n", node));
        }
        command.addAll(List.of(args));
        Process ctl = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(ctl.getInputStream().readAllBytes());
        if (!ctl.waitFor(60, TimeUnit.SECONDS)) {
            ctl.destroyForcibly();
            throw new IllegalStateException("rabbitmqctl " + String.join(" ", args) + " did not finish");
        }
        if (ctl.exitValue() != 0 && !(mayExist && output.contains("already exists"))) {
            throw new IllegalStateException("rabbitmqctl " + args[0] + " failed: " + output);
        }
        return output;
    }
}
