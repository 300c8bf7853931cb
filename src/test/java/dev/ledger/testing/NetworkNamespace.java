package dev.ledger.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A host of the test's own behind a network link it can break for real: a Linux network namespace joined to
 * this one by a veth pair on a /30 of {@code 10.200.0.0/16} that nothing else on the machine uses. Servers
 * started with {@link #command} run inside it and listen on {@link #address()}. {@link #cut()} sets the
 * inside end of the link down, so that packets are lost silently in both directions (no reset, no ICMP; the
 * neighbour entries are permanent, so no failed ARP answers "no route to host" either), as a broken switch or
 * a security-group change does; {@link #heal()} sets it up again. Needs root and {@code ip netns}.
 *
 * <p>Its names carry this JVM's pid ({@code ledger-net-<pid>-<n>}, links {@code ln<pid>o<n>}), so that two
 * test runs at once never touch each other's; {@link #removeLeftovers()} removes those of a run whose JVM is
 * gone (killed before its clean-up), processes inside included.
 */
public final class NetworkNamespace implements AutoCloseable {
    private static final String PREFIX = "ledger-net-";
    private static final Pattern OURS = Pattern.compile(PREFIX + "(\\d+)-\\d+");
    private static final Pattern OUR_LINK = Pattern.compile("ln(\\d+)o\\d+");
    private static final long PID = ProcessHandle.current().pid();
    private static int made;

    private final String name;
    private final String outside;
    private final String inside;
    private final String subnet;

    private NetworkNamespace(String name, String outside, String inside, String subnet) {
        this.name = name;
        this.outside = outside;
        this.inside = inside;
        this.subnet = subnet;
    }

    /** Why namespaces cannot be made here (not root, no {@code ip netns}); empty when they can. */
    public static Optional<String> unavailable() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return Optional.of("network namespaces need root (the test runs as " + System.getProperty("user.name") + ")");
        }
        try {
            Result list = run("ip", "netns", "list");
            return list.ok() ? Optional.empty() : Optional.of("`ip netns list` failed: " + list.output());
        } catch (IOException e) {
            return Optional.of("no `ip` command: " + e.getMessage());
        }
    }

    /** Makes a namespace with its link up, and the servers' loopback inside it. */
    public static synchronized NetworkNamespace create() throws IOException {
        int index = made++;
        String subnet = freeSubnet();
        NetworkNamespace namespace = new NetworkNamespace(PREFIX + PID + "-" + index, "ln" + PID + "o" + index,
                "ln" + PID + "i" + index, subnet);
        try {
            namespace.setUp();
        } catch (IOException | RuntimeException e) {
            namespace.close();
            throw e;
        }
        return namespace;
    }

    private void setUp() throws IOException {
        check("ip", "netns", "add", name);
        check("ip", "link", "add", outside, "type", "veth", "peer", "name", inside);
        check("ip", "link", "set", inside, "netns", name);
        check("ip", "addr", "add", subnet + ".1/30", "dev", outside);
        check("ip", "-n", name, "addr", "add", address() + "/30", "dev", inside);
        check("ip", "link", "set", outside, "up");
        check("ip", "-n", name, "link", "set", inside, "up");
        check("ip", "-n", name, "link", "set", "lo", "up");
        // permanent neighbours: while the link is down nothing resolves, and so nothing reports "no route to host"
        check("ip", "neigh", "replace", address(), "lladdr", mac(List.of("ip", "-n", name), inside), "dev", outside, "nud", "permanent");
        check("ip", "-n", name, "neigh", "replace", subnet + ".1", "lladdr", mac(List.of("ip"), outside), "dev", inside, "nud", "permanent");
    }

    /**
     * Where a server of a test listens: inside {@code namespace} on its address and {@code port} (the namespace's
     * ports are its own), or, without one, on a free port of 127.0.0.1.
     */
    public static InetSocketAddress listenAddress(NetworkNamespace namespace, int port) throws IOException {
        if (namespace != null) {
            return InetSocketAddress.createUnresolved(namespace.address(), port);
        }
        try (ServerSocket socket = new ServerSocket(0)) {
            return InetSocketAddress.createUnresolved("127.0.0.1", socket.getLocalPort());
        }
    }

    /** The address of the namespace's end of the link: where its servers listen. */
    public String address() {
        return subnet + ".2";
    }

    public String name() {
        return name;
    }

    /** {@code command} as run inside the namespace. */
    public List<String> command(List<String> command) {
        List<String> inNamespace = new ArrayList<>(List.of("ip", "netns", "exec", name));
        inNamespace.addAll(command);
        return inNamespace;
    }

    /** The link down: from now on every packet either way is lost, silently. */
    public void cut() throws IOException {
        check("ip", "-n", name, "link", "set", inside, "down");
    }

    /** The link up again. */
    public void heal() throws IOException {
        check("ip", "-n", name, "link", "set", inside, "up");
    }

    /** Kills what still runs inside, then removes the namespace and its link. */
    @Override
    public void close() throws IOException {
        remove(name, outside);
    }

    /** Removes the namespaces and links of test runs whose JVM no longer runs. */
    public static void removeLeftovers() throws IOException {
        for (String line : run("ip", "netns", "list").output().split("\n")) {
            String namespace = line.split(" ")[0].trim();
            Matcher ours = OURS.matcher(namespace);
            if (ours.matches() && !alive(Long.parseLong(ours.group(1)))) {
                System.out.println("[network-namespace] removing " + namespace + ", left by a run that is gone");
                remove(namespace, null);
            }
        }
        for (String line : run("ip", "-o", "link", "show").output().split("\n")) {
            String[] fields = line.split(":\\s+");
            if (fields.length > 1) {
                String link = fields[1].split("@")[0];
                Matcher ours = OUR_LINK.matcher(link);
                if (ours.matches() && !alive(Long.parseLong(ours.group(1)))) {
                    run("ip", "link", "del", link);
                }
            }
        }
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private static void remove(String namespace, String outsideLink) throws IOException {
        if (run("ip", "netns", "list").output().lines().anyMatch(line -> line.split(" ")[0].equals(namespace))) {
            for (String pid : run("ip", "netns", "pids", namespace).output().split("\\s+")) {
                if (!pid.isBlank()) {
                    ProcessHandle.of(Long.parseLong(pid)).ifPresent(process -> {
                        process.destroyForcibly();
                        process.onExit().orTimeout(20, TimeUnit.SECONDS).exceptionally(timedOut -> null).join();
                    });
                }
            }
            run("ip", "netns", "del", namespace); // its end of the link goes with it, and so the pair
        }
        if (outsideLink != null) {
            run("ip", "link", "del", outsideLink); // fails harmlessly when gone already
        }
    }

    /** The first {@code 10.200.N.0/30}, N from 100, that no address or route of the machine is in. */
    private static String freeSubnet() throws IOException {
        String used = run("ip", "-4", "-o", "addr", "show").output() + "\n" + run("ip", "-4", "route", "show", "table", "all").output();
        for (int n = 100; n < 250; n++) {
            String subnet = "10.200." + n;
            if (!used.contains(subnet + ".")) {
                return subnet;
            }
        }
        throw new IOException("no free 10.200.N.0/30 between N=100 and 249");
    }

    private static String mac(List<String> ip, String link) throws IOException {
        List<String> command = new ArrayList<>(ip);
        command.addAll(List.of("-br", "link", "show", link));
        Result shown = run(command.toArray(String[]::new));
        String[] fields = shown.output().trim().split("\\s+");
        if (!shown.ok() || fields.length < 3) {
            throw new IOException("no MAC address for " + link + ": " + shown.output());
        }
        return fields[2];
    }

    private record Result(int exit, String output) {
        boolean ok() {
            return exit == 0;
        }
    }

    private static void check(String... command) throws IOException {
        Result result = run(command);
        if (!result.ok()) {
            throw new IOException(String.join(" ", command) + " failed (" + result.exit() + "): " + result.output());
        }
    }

    private static Result run(String... command) throws IOException {
        Process process = new ProcessBuilder(Arrays.asList(command)).redirectErrorStream(true).start();
        try {
            String output = new String(process.getInputStream().readAllBytes());
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish");
            }
            return new Result(process.exitValue(), output);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
