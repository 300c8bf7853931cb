package dev.ledger.testing;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL cluster of the test's own (initdb in a temporary folder, its own port, trust
 * auth), so that a test can crash and restart it without touching the shared server: on 127.0.0.1, or
 * inside a {@link NetworkNamespace} on its address. PostgreSQL refuses to run as root: as root, its
 * commands run as the {@code postgres} user.
 */
public final class PostgresServer implements AutoCloseable {
    private final Path dataDir;
    private final Path bin;
    private final String address;
    private final int port;
    private final NetworkNamespace namespace;

    /** On 127.0.0.1, on a free port. */
    public PostgresServer() throws IOException, InterruptedException {
        this(null);
    }

    /** Inside {@code namespace}, listening on its address (port 5432, which is the namespace's alone). */
    public PostgresServer(NetworkNamespace namespace) throws IOException, InterruptedException {
        this(namespace, NetworkNamespace.listenAddress(namespace, 5432));
    }

    /** On 127.0.0.1:{@code port}; 0: a free port. */
    public PostgresServer(int port) throws IOException, InterruptedException {
        this(null, port == 0 ? NetworkNamespace.listenAddress(null, 5432) : InetSocketAddress.createUnresolved("127.0.0.1", port));
    }

    private PostgresServer(NetworkNamespace namespace, InetSocketAddress listen) throws IOException, InterruptedException {
        this.namespace = namespace;
        this.bin = findBin();
        this.address = listen.getHostString();
        this.port = listen.getPort();
        this.dataDir = Files.createTempDirectory("ledger-crash-pg-");
        if (isRoot()) {
            run("chown", "postgres", dataDir.toString());
        }
        run(asPostgres(bin.resolve("initdb").toString(), "-D", dataDir.resolve("data").toString(), "-U", "postgres",
                "-A", "trust", "--no-sync", "-E", "UTF8"));
        if (namespace != null) {
            // initdb trusts loopback alone; the clients of a namespace's server come over its link
            Files.writeString(dataDir.resolve("data").resolve("pg_hba.conf"), "host all all 0.0.0.0/0 trust\n",
                    StandardOpenOption.APPEND);
        }
        start();
    }

    public int port() {
        return port;
    }

    public String host() {
        return address + ":" + port;
    }

    public Connection connect(String database) throws Exception {
        return DriverManager.getConnection("jdbc:postgresql://" + host() + "/" + database, "postgres", "");
    }

    public void start() throws IOException, InterruptedException {
        List<String> start = asPostgres(bin.resolve("pg_ctl").toString(), "-D", dataDir.resolve("data").toString(),
                "-l", dataDir.resolve("server.log").toString(), "-w", "-t", "60",
                "-o", "-p " + port + " -c listen_addresses=" + address + " -c unix_socket_directories=" + dataDir
                        + " -c fsync=off -c max_connections=100", "start");
        // the server inherits the namespace of the pg_ctl that starts it
        run(namespace == null ? start : namespace.command(start));
    }

    /** An immediate stop: no checkpoint, connections cut, recovery at the next start (a crash). */
    public void crash() throws IOException, InterruptedException {
        run(asPostgres(bin.resolve("pg_ctl").toString(), "-D", dataDir.resolve("data").toString(),
                "-m", "immediate", "-w", "-t", "60", "stop"));
    }

    /**
     * Freezes the server (SIGSTOP to the postmaster and every backend): connections stay open and nothing answers,
     * as a primary that hangs does; {@link #thaw()} lets it go on.
     */
    public void freeze() throws IOException, InterruptedException {
        signalAll("-STOP");
    }

    public void thaw() throws IOException, InterruptedException {
        signalAll("-CONT");
    }

    private void signalAll(String signal) throws IOException, InterruptedException {
        String postmaster = Files.readAllLines(dataDir.resolve("data").resolve("postmaster.pid")).get(0).trim();
        String children = run(List.of("pgrep", "-P", postmaster)).trim();
        List<String> kill = new ArrayList<>(List.of("kill", signal, postmaster));
        kill.addAll(Arrays.asList(children.split("\\s+")));
        run(kill);
    }

    public void restart() throws IOException, InterruptedException {
        crash();
        start();
    }

    /**
     * {@code sql} run by psql over the server's Unix socket, which reaches it even while its network is cut;
     * answers psql's output (unaligned, tuples only).
     */
    public String psql(String database, String sql) throws IOException, InterruptedException {
        return run(psqlCommand(database, "-c", sql));
    }

    /** A psql session over the Unix socket that runs what is written to its standard input (unaligned, tuples only). */
    public Process psqlSession(String database) throws IOException {
        return new ProcessBuilder(psqlCommand(database)).redirectErrorStream(true).start();
    }

    private List<String> psqlCommand(String database, String... args) {
        List<String> command = asPostgres(bin.resolve("psql").toString(), "-h", dataDir.toString(), "-p", Integer.toString(port),
                "-U", "postgres", "-d", database, "-Atq", "-v", "ON_ERROR_STOP=1");
        command.addAll(Arrays.asList(args));
        return command;
    }

    @Override
    public void close() throws Exception {
        try {
            crash();
        } finally {
            try (Stream<Path> files = Files.walk(dataDir)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    /** Whether a PostgreSQL server installation (initdb) is there to start one. */
    public static boolean installed() {
        try {
            return Files.isExecutable(findBin().resolve("initdb"));
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static List<String> asPostgres(String... command) {
        List<String> full = new ArrayList<>();
        if (isRoot()) {
            full.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        full.addAll(Arrays.asList(command));
        return full;
    }

    private static void run(String... command) throws IOException, InterruptedException {
        run(Arrays.asList(command));
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + output);
        }
        return output;
    }

    /** The newest installed PostgreSQL's binaries (Debian layout), or those on the PATH. */
    private static Path findBin() throws IOException {
        Path debian = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(debian)) {
            try (Stream<Path> versions = Files.list(debian)) {
                return versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")))
                        .max(Comparator.comparingInt(b -> Integer.parseInt(b.getParent().getFileName().toString())))
                        .orElseThrow(() -> new IOException("no initdb under /usr/lib/postgresql"));
            }
        }
        return Path.of("/usr/bin");
    }
}
